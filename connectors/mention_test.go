package connectors

import (
	"strings"
	"testing"
)

func TestMentionsRenderPerPlatform(t *testing.T) {
	t.Parallel()
	text := "approved by " + Mention("U04ABC") + " for " + Mention("Jane Doe") + "."
	if strings.ContainsAny(text, " \n") && strings.Contains(Mention("Jane Doe"), " ") {
		t.Fatalf("a placeholder holds a blank, where a page may be cut: %q", Mention("Jane Doe"))
	}
	slack := RenderMentions(text, func(id string) string { return "<@" + id + ">" })
	if slack != "approved by <@U04ABC> for <@Jane Doe>." {
		t.Errorf("slack: %q", slack)
	}
	if got := PlainMentions(text); got != "approved by @U04ABC for @Jane Doe." {
		t.Errorf("plain: %q", got)
	}
	if got := PlainMentions("no mention here"); got != "no mention here" {
		t.Errorf("plain text changed: %q", got)
	}
	// A broken placeholder never shows its syntax.
	broken := "a " + mentionOpen + "U1 b" + mentionClose + mentionClose + " " + mentionOpen + "U2"
	if got := PlainMentions(broken); strings.ContainsAny(got, mentionOpen+mentionClose) {
		t.Errorf("broken placeholder shows: %q", got)
	}
}
