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

// A message mentioning someone other than the bot is for them, not the
// bot (bot.thread_replies: addressed): Slack's and Discord's markup.
func TestMentionsOther(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want bool
	}{
		{"<@UBOT> check the disks", false},
		{"<@UBOT|opsbot> check the disks", false},
		{"<@!123> check the disks", false},
		{"thanks, that helped", false},
		{"mail ops@example.com", false},
		{"<@U04ABC> can you look?", true},
		{"<@UBOT> and <@U04ABC|jane> look", true},
		{"<@!999> see this", true},
		{"<@&555> on call, see this", true},
		{"<!subteam^S0614TZR7|@oncall> see this", true},
		{"<!here> heads up", true},
		{"<!channel|channel> heads up", true},
		{"@everyone heads up", true},
		{"ping @here", true},
		{"the @hereafter is no mention", false},
	}
	for _, tt := range tests {
		if got := MentionsOther(tt.text, "UBOT", "123"); got != tt.want {
			t.Errorf("MentionsOther(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// A group's placeholder is shown as the platform's group mention where
// the connector has one, else as the plain group name; never as a person
// nor as the placeholder's characters.
func TestGroupMentionsRender(t *testing.T) {
	t.Parallel()
	text := Mention("U2") + " or members of " + GroupMention("S1")
	got := RenderAllMentions(text, func(id string) string { return "<@" + id + ">" }, func(id string) string { return "<!subteam^" + id + ">" })
	if got != "<@U2> or members of <!subteam^S1>" {
		t.Errorf("slack: %q", got)
	}
	if got := PlainMentions(text); got != "@U2 or members of S1" {
		t.Errorf("plain: %q", got)
	}
}
