package discord

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// A health report the Discord way: the day's summary at the top of the
// channel, its details in a thread named after the schedule and day, and
// a change that must be heard as a new channel message (Discord cannot
// broadcast a thread reply) that links the thread and pings exactly the
// configured role and user: allowed_mentions names them and parses
// nothing, so the @everyone in its text pings no one.
func TestHealthBroadcastPingsTheConfiguredRoleOnly(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	to := connectors.Dest{Platform: Platform, Channel: ch}
	root, err := c.Post(t.Context(), to, connectors.Message{Text: "**Health · nightly** — ✓ 2 ok", ThreadName: "health: nightly · 2026-11-27"})
	if err != nil {
		t.Fatal(err)
	}
	to.Thread = root.Thread
	if _, err := c.Post(t.Context(), to, connectors.Message{Text: "details"}); err != nil {
		t.Fatal(err)
	}
	if th, ok := f.Channel(root.Thread); !ok || th.Name != "health: nightly · 2026-11-27" {
		t.Errorf("the report's thread is %+v; want it named health: nightly · 2026-11-27", th)
	}
	const role, user = "234567890123456789", "123456789012345678"
	m := connectors.Message{Text: "✗ disk failing on web-02 @everyone", Broadcast: true,
		Notify: []string{"<@&" + role + ">", "<@" + user + ">", "<!subteam^S0SRE>", "@everyone", "<@&oncall>"}}
	ref, err := c.Post(t.Context(), to, m)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.Message(ref.ID)
	if got.ChannelID != ch {
		t.Errorf("the broadcast went to channel %s; want the report's channel %s", got.ChannelID, ch)
	}
	want := "<@&" + role + "> <@" + user + "> ✗ disk failing on web-02 @everyone\n-# in <#" + root.Thread + ">"
	if got.Content != want {
		t.Errorf("content %q; want %q", got.Content, want)
	}
	var am struct {
		Parse []string `json:"parse"`
		Users []string `json:"users"`
		Roles []string `json:"roles"`
	}
	if err := json.Unmarshal(got.AllowedMentions, &am); err != nil {
		t.Fatal(err)
	}
	if am.Parse == nil || len(am.Parse) != 0 || !slices.Equal(am.Roles, []string{role}) || !slices.Equal(am.Users, []string{user}) {
		t.Errorf("allowed_mentions %s; want parse [] (never @everyone), roles [%s] and users [%s] alone", got.AllowedMentions, role, user)
	}
	if strings.Contains(string(got.AllowedMentions), "everyone") {
		t.Errorf("allowed_mentions %s lets @everyone ping", got.AllowedMentions)
	}
}
