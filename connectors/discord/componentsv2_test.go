package discord

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// With Components V2 a page holds 4,000 characters, not 2,000 (less the
// context line's 200): a page of the renderer's full size, mentions and a
// context line included, is taken by the fake (which refuses past 4,000
// across the text displays) whole, its context line kept.
func TestV2PageHolds4000Characters(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	if got, want := c.Limits().MaxText, 4000-200-mentionSlack; got != want {
		t.Fatalf("MaxText %d; want %d", got, want)
	}
	mention := connectors.Mention("1100000000000000777")
	text := strings.Repeat("é", c.Limits().MaxText-utf8.RuneCountInString(mention)) + mention
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, connectors.Message{Text: text, Context: "✓ `df -h` on web-1: exit 0 in 12ms"})
	if err != nil {
		t.Fatalf("post of a full page: %v", err)
	}
	m, _ := f.Message(ref.ID)
	body, ctx, _ := strings.Cut(m.Content, "\n")
	if !strings.HasSuffix(body, "<@1100000000000000777>") || utf8.RuneCountInString(body) != c.Limits().MaxText+1 || !strings.Contains(ctx, "df -h") {
		t.Errorf("the page or its context line is not whole: %d characters, context %q", utf8.RuneCountInString(body), ctx)
	}
}

// Text past 4,000 characters is cut to fit with the context line and a
// card's facts, never refused.
func TestV2LongTextIsCutNotRefused(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	for _, m := range []connectors.Message{
		{Text: strings.Repeat("word ", 1500), Context: "ran 2 commands on web-1 · 14s"},
		{Text: strings.Repeat("word ", 1500), Context: strings.Repeat("c", 900), Fields: facts(30)},
	} {
		ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, m)
		if err != nil {
			t.Fatalf("post of %d characters: %v", len(m.Text), err)
		}
		got, _ := f.Message(ref.ID)
		if n := utf8.RuneCountInString(strings.ReplaceAll(got.Content, "\n", "")); n > 4000 || n < 3900 {
			t.Errorf("%d characters shown; want the text cut to about 4,000", n)
		}
	}
}

// facts are n fields of a card.
func facts(n int) []connectors.Field {
	out := make([]connectors.Field, n)
	for i := range out {
		out[i] = connectors.Field{Title: fmt.Sprint("Fact ", i), Value: strings.Repeat("v", 300)}
	}
	return out
}

// A card of many facts and buttons stays within V2's 40 components and a
// container's ten children: the fake takes it, its first buttons clickable
// beside the facts.
func TestV2CardWithinComponentLimits(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	var bs []connectors.Button
	for i := range 25 {
		bs = append(bs, connectors.Button{ActionID: "pick", Value: fmt.Sprint(i), Label: fmt.Sprint("option ", i)})
	}
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, connectors.Message{Text: "pick", Fields: facts(30), Context: "now", Buttons: bs})
	if err != nil {
		t.Fatalf("post of a card of 30 facts and 25 buttons: %v", err)
	}
	if ids := f.Buttons(ref.ID); len(ids) < 7 || ids[0] != "pick:0" {
		t.Errorf("buttons shown %q; want the first at least, beside the facts", ids)
	}
}

// An approval card is one container coloured by its risk: red or amber
// while it waits, each fact in a section whose accessory is a button
// (Approve beside the first); green once approved, its buttons gone. The
// edit says the flag again (the fake refuses one that does not).
func TestV2CardIsAContainerEditedInPlace(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	pending := connectors.Message{Text: "**Approval needed**", Context: "expires soon", Risk: connectors.RiskHigh,
		Fields: []connectors.Field{{Title: "Host", Value: "web-1"}, {Title: "Needs", Value: "1 approval"}},
		Buttons: []connectors.Button{{ActionID: "approve", Value: "a1", Label: "Approve", Style: connectors.StylePrimary},
			{ActionID: "deny", Value: "a1", Label: "Deny", Style: connectors.StyleDanger}}}
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, pending)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.Message(ref.ID)
	box := container(t, got.Components)
	if box.AccentColor != 0xE74C3C || len(box.Components) != 5 || box.Components[2].Type != 9 || box.Components[3].Type != 9 ||
		box.Components[2].Accessory.CustomID != "approve:a1" || box.Components[3].Accessory.Style != 4 {
		t.Errorf("the pending card: %s", got.Components)
	}
	decided := connectors.Message{Text: "**Approved by @bob**", Context: "approved", Fields: pending.Fields, Risk: connectors.RiskApproved}
	if err := c.Edit(t.Context(), ref, decided); err != nil {
		t.Fatalf("edit of a V2 card: %v", err)
	}
	got, _ = f.Message(ref.ID)
	if box := container(t, got.Components); box.AccentColor != 0x2ECC71 || len(f.Buttons(ref.ID)) != 0 ||
		got.Content != "**Approved by @bob**\n**Host**: web-1\n**Needs**: 1 approval\n-# approved" {
		t.Errorf("the decided card shows %q, accent %x, buttons %q", got.Content, box.AccentColor, f.Buttons(ref.ID))
	}
	old, _ := started(t, f, legacy)
	if err := old.Edit(t.Context(), ref, decided); err == nil {
		t.Error("the fake took a legacy edit (content, no flag) of a V2 message")
	}
}

// A card's accent is its risk's colour; one that names none is amber
// while it has buttons and blue (information) without.
func TestV2CardAccentIsItsRisk(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	approve := []connectors.Button{{ActionID: "approve", Value: "a1", Label: "Approve"}}
	for _, tc := range []struct {
		risk    connectors.Risk
		buttons []connectors.Button
		want    int
	}{
		{connectors.RiskHigh, approve, 0xE74C3C}, {connectors.RiskAsk, approve, 0xE67E22},
		{connectors.RiskApproved, nil, 0x2ECC71}, {connectors.RiskClosed, nil, 0x95A5A6},
		{connectors.RiskInfo, nil, 0x3498DB}, {connectors.RiskInfo, approve, 0xE67E22},
	} {
		m := connectors.Message{Text: "card", Fields: facts(2), Risk: tc.risk, Buttons: tc.buttons}
		ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, m)
		if err != nil {
			t.Fatalf("risk %q: %v", tc.risk, err)
		}
		got, _ := f.Message(ref.ID)
		if box := container(t, got.Components); box.AccentColor != tc.want {
			t.Errorf("risk %q, %d buttons: accent %06x; want %06x", tc.risk, len(tc.buttons), box.AccentColor, tc.want)
		}
	}
}

// Every fact of a card with buttons stands in a section whose accessory
// is a button, a text display of its own: a section per fact while the
// buttons last, else shared among the buttons' sections, three at most.
func TestV2CardFactsAreInSections(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	var bs []connectors.Button
	for i := range 3 {
		bs = append(bs, connectors.Button{ActionID: "pick", Value: fmt.Sprint(i), Label: fmt.Sprint("option ", i)})
	}
	for _, tc := range []struct {
		facts int
		want  []int // texts per section
	}{{2, []int{1, 1}}, {3, []int{1, 1, 1}}, {4, []int{2, 1, 1}}, {7, []int{3, 2, 2}}} {
		ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, connectors.Message{Text: "pick", Fields: facts(tc.facts), Buttons: bs})
		if err != nil {
			t.Fatalf("%d facts: %v", tc.facts, err)
		}
		got, _ := f.Message(ref.ID)
		var per []int
		for _, x := range container(t, got.Components).Components {
			switch x.Type {
			case 9:
				per = append(per, len(x.Components))
			case 10:
				if strings.Contains(x.Content, "Fact") {
					t.Errorf("%d facts: a fact outside a section", tc.facts)
				}
			}
		}
		if fmt.Sprint(per) != fmt.Sprint(tc.want) {
			t.Errorf("%d facts, 3 buttons: texts per section %v; want %v", tc.facts, per, tc.want)
		}
	}
}

// layout is a V2 component as the tests read it.
type layout struct {
	Type        int      `json:"type"`
	AccentColor int      `json:"accent_color"`
	Content     string   `json:"content"`
	Components  []layout `json:"components"`
	Accessory   *struct {
		CustomID string `json:"custom_id"`
		Style    int    `json:"style"`
	} `json:"accessory"`
}

// container is the one container of a message's components.
func container(t *testing.T, raw json.RawMessage) layout {
	t.Helper()
	var top []layout
	if err := json.Unmarshal(raw, &top); err != nil || len(top) != 1 || top[0].Type != 17 {
		t.Fatalf("components %s; want one container", raw)
	}
	return top[0]
}

// A card posted the legacy way before components_v2 was turned on is
// still decided after the upgrade: Discord may refuse to give the flag to
// a message with content (the fake does), and the connector then edits it
// the legacy way, its buttons gone.
func TestV2EditOfALegacyMessage(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	before, _ := started(t, f, legacy)
	card := connectors.Message{Text: "**Approval needed**", Fields: []connectors.Field{{Title: "Host", Value: "web-1"}},
		Buttons: []connectors.Button{{ActionID: "approve", Value: "a1", Label: "Approve"}}}
	ref, err := before.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, card)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := started(t, f, Config{})
	decided := connectors.Message{Text: "**Approved by @bob**", Fields: card.Fields, Context: "approved"}
	if err := after.Edit(t.Context(), ref, decided); err != nil {
		t.Fatalf("edit of a legacy card after the upgrade: %v", err)
	}
	m, _ := f.Message(ref.ID)
	if m.Content != "**Approved by @bob**\n-# approved" || m.Flags != 0 || len(f.Buttons(ref.ID)) != 0 {
		t.Errorf("the legacy card shows %q, flags %d, buttons %q", m.Content, m.Flags, f.Buttons(ref.ID))
	}
}

// Whatever a card or an answer holds (0 to 30 facts, 0 to 25 buttons, a
// context line or none, a text past the limit), its V2 rendering keeps
// Discord's limits: 40 components, ten children in a container, one to
// three texts and an accessory in a section, 4,000 characters of text.
func TestV2RenderingKeepsTheLimits(t *testing.T) {
	t.Parallel()
	c := &Connector{log: slog.New(slog.DiscardHandler), custom: map[string][2]string{}}
	// Around each bound: the facts shown one to a line (6), the buttons
	// of a row (5), the container's ten children, the most buttons (25).
	for _, nf := range []int{0, 1, 2, 5, 6, 7, 8, 30} {
		for _, nb := range []int{0, 1, 2, 5, 6, 7, 8, 11, 24, 25} {
			for _, ctx := range []string{"", strings.Repeat("c", 500)} {
				m := connectors.Message{Text: strings.Repeat("t", 5000), Fields: facts(nf), Context: ctx}
				for i := range nb {
					m.Buttons = append(m.Buttons, connectors.Button{ActionID: "b", Value: fmt.Sprint(i), Label: "B"})
				}
				if err := withinV2Limits(c.renderV2(m)); err != "" {
					t.Fatalf("%d facts, %d buttons, context %d: %s", nf, nb, len(ctx), err)
				}
			}
		}
	}
}

// withinV2Limits says what limit of Discord's cs break, if any.
func withinV2Limits(cs []discordgo.MessageComponent) string {
	if n := count(cs); n > maxV2Components {
		return fmt.Sprintf("%d components", n)
	}
	text := 0
	var walk func([]discordgo.MessageComponent) string
	walk = func(cs []discordgo.MessageComponent) string {
		for _, x := range cs {
			switch v := x.(type) {
			case discordgo.TextDisplay:
				text += utf8.RuneCountInString(v.Content)
			case discordgo.Container:
				if len(v.Components) > maxInContainer {
					return fmt.Sprintf("a container of %d", len(v.Components))
				}
				if e := walk(v.Components); e != "" {
					return e
				}
			case discordgo.Section:
				if len(v.Components) < 1 || len(v.Components) > 3 || v.Accessory == nil {
					return "a section of " + fmt.Sprint(len(v.Components)) + " texts or no accessory"
				}
				walk(v.Components)
			}
		}
		return ""
	}
	if e := walk(cs); e != "" {
		return e
	}
	if text > maxV2Text {
		return fmt.Sprintf("%d characters of text", text)
	}
	return ""
}
