package slack

import (
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// The card's approvers show as Slack's user and user group mentions, not
// as bare ids nor placeholder characters, in posts and in streams.
func TestApproversRenderAsMentions(t *testing.T) {
	t.Parallel()
	text := connectors.Mention("U2") + " or members of " + connectors.GroupMention("S1")
	want := "<@U2> or members of <!subteam^S1>"
	if got := toMrkdwn(text); got != want {
		t.Errorf("post: %q, want %q", got, want)
	}
	if got := toMrkdwnStream(text); got != want {
		t.Errorf("stream: %q, want %q", got, want)
	}
}
