package discord

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// posted posts m in a new channel of a fresh fake, answering requester,
// with cfg's rendering, and returns what the fake holds.
func posted(t *testing.T, cfg Config, m connectors.Message, requester string) discordtest.Message {
	t.Helper()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, cfg)
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch, Recipient: connectors.User{ID: requester}}, m)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	got, _ := f.Message(ref.ID)
	return got
}

// An approval card the legacy way (components_v2: false): fields in an
// embed, the context line as subtext, Approve and Deny in one action row
// (Deny in the danger style), and only the requester may be pinged.
func TestCardRendering(t *testing.T) {
	t.Parallel()
	requester := "1100000000000000777"
	m := connectors.Message{
		Text:    "**Approval needed** — requested by " + connectors.Mention(requester) + " @everyone",
		Fields:  []connectors.Field{{Title: "Host", Value: "web-1"}, {Title: "Needs", Value: "1 approval"}},
		Context: "expires Nov 24 16:09 UTC",
		Buttons: []connectors.Button{{ActionID: "approve", Value: "a1", Label: "Approve", Style: connectors.StylePrimary},
			{ActionID: "deny", Value: "a1", Label: "Deny", Style: connectors.StyleDanger}},
	}
	got := posted(t, legacy, m, requester)
	if want := "**Approval needed** — requested by <@" + requester + "> @everyone\n-# expires Nov 24 16:09 UTC"; got.Content != want {
		t.Errorf("content %q; want %q", got.Content, want)
	}
	var rows []struct {
		Components []struct {
			Style    int    `json:"style"`
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	json.Unmarshal(got.Components, &rows)
	if len(rows) != 1 || len(rows[0].Components) != 2 || rows[0].Components[0].Style != 1 || rows[0].Components[1].Style != 4 ||
		rows[0].Components[0].CustomID != "approve:a1" || rows[0].Components[1].Label != "Deny" {
		t.Errorf("components %s; want one row: Approve primary (1), Deny danger (4)", got.Components)
	}
	if len(got.Embeds) != 1 || !strings.Contains(string(got.Embeds[0]), `"name":"Host","value":"web-1","inline":true`) {
		t.Errorf("embeds %s; want the fields inline", got.Embeds)
	}
	var am struct {
		Parse []string `json:"parse"`
		Users []string `json:"users"`
	}
	json.Unmarshal(got.AllowedMentions, &am)
	if am.Parse == nil || len(am.Parse) != 0 || len(am.Users) != 1 || am.Users[0] != requester {
		t.Errorf("allowed_mentions %s; want parse [] (no @everyone, no roles) and the requester alone", got.AllowedMentions)
	}
}

// Buttons fill action rows five at a time, five rows at most, and a
// custom_id never passes 100 characters: a long value still comes back
// whole when clicked.
func TestButtonsWithinDiscordsLimits(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, events := started(t, f, Config{})
	var bs []connectors.Button
	for i := range 30 {
		bs = append(bs, connectors.Button{ActionID: "pick", Value: fmt.Sprint(i), Label: fmt.Sprint("option ", i)})
	}
	long := strings.Repeat("v", 150)
	bs[3].Value = long
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, connectors.Message{Text: "pick one", Buttons: bs})
	if err != nil {
		t.Fatalf("post of 30 buttons: %v", err)
	}
	ids := f.Buttons(ref.ID)
	if len(ids) != 25 {
		t.Fatalf("%d buttons shown; want 25 (5 rows of 5)", len(ids))
	}
	for _, id := range ids {
		if len(id) > 100 {
			t.Errorf("custom_id of %d characters", len(id))
		}
	}
	f.Click(f.NewUser("alice"), ref.ID, ids[3])
	if ev := next(t, events, connectors.EventAction); ev.ActionID != "pick" || ev.Value != long {
		t.Errorf("the click on the long value came as %q %q", ev.ActionID, ev.Value)
	}
}

// A page of the renderer's full size with a context line stays within
// 2,000 characters in the legacy rendering: the context moves to the
// embed's footer.
func TestFullPageKeepsTheLimit(t *testing.T) {
	t.Parallel()
	c := &Connector{cfg: legacy, custom: map[string][2]string{}}
	mention := connectors.Mention("1100000000000000777")
	text := strings.Repeat("é", c.Limits().MaxText-utf8.RuneCountInString(mention)) + mention
	r := c.render(connectors.Message{Text: text, Context: "✓ `df -h` on web-1: exit 0 in 12ms"})
	if n := utf8.RuneCountInString(r.content); n > 2000 {
		t.Errorf("content of %d characters", n)
	}
	if !strings.HasSuffix(r.content, "<@1100000000000000777>") || len(r.embeds) != 1 || r.embeds[0].Footer == nil || !strings.Contains(r.embeds[0].Footer.Text, "df -h") {
		t.Errorf("the text or the context is lost: %d characters, embeds %+v", utf8.RuneCountInString(r.content), r.embeds)
	}
}

// The card's approvers show as Discord's user and role mentions, not as
// bare ids nor placeholder characters.
func TestApproversRenderAsMentions(t *testing.T) {
	t.Parallel()
	text := connectors.Mention("100000000000000003") + " or members of " + connectors.GroupMention("200000000000000001")
	if got := renderMentions(text); got != "<@100000000000000003> or members of <@&200000000000000001>" {
		t.Errorf("discord: %q", got)
	}
}
