package discord

import (
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// Components V2's limits
// (https://discord.com/developers/docs/components/reference): the text
// of all text displays together, the components of a message counted at
// every depth, a container's children.
const (
	maxV2Text       = 4000
	maxV2Components = 40
	maxInContainer  = 10
)

// A card's facts and the context line are bounded so that they never
// take the text's room: maxFactsV2 facts show one to a line, the rest
// share one more line. The context line's room is kept out of the page
// the bot's renderer fills (see Limits): all text displays count against
// the 4,000, where the legacy rendering could move the line to an
// embed's footer.
const (
	maxFactV2    = 400
	maxFactsV2   = 6
	maxRestV2    = 1000
	maxContextV2 = 200
)

// Accent colours of a card's container, by its risk
// (connectors.Risk): red for a risky request waiting for a decision,
// amber for any other, green once approved, grey once denied or expired,
// blue for information.
const (
	accentHigh     = 0xE74C3C
	accentAsk      = 0xE67E22
	accentApproved = 0x2ECC71
	accentClosed   = 0x95A5A6
	accentInfo     = 0x3498DB
)

// maxSectionTexts is how many text displays a section holds.
const maxSectionTexts = 3

// renderV2 turns m into Components V2 (the message's flag is
// IS_COMPONENTS_V2: no content, no embeds). An answer is text displays:
// its text, with the Notify mentions first, then its context line as
// subtext, then its buttons in action rows. A message with fields is an
// approval card: one container whose accent is its risk, its text, a
// separator, its facts in sections whose accessories are its buttons
// (factSections), then the context line.
// The text displays hold at most 4,000 characters in all, the text giving
// way to the rest.
func (c *Connector) renderV2(m connectors.Message) []discordgo.MessageComponent {
	text := renderMentions(m.Text)
	if p := notifyPings(m.Notify); p.prefix != "" {
		text = strings.TrimSpace(p.prefix + " " + text)
	}
	sub := ""
	if ctx := renderMentions(m.Context); ctx != "" {
		sub = truncate("-# "+strings.ReplaceAll(ctx, "\n", " "), maxContextV2)
	}
	var facts []string
	if len(m.Fields) > 0 {
		facts = factLines(m.Fields)
	}
	room := maxV2Text - runes(sub) - runes(facts...)
	if runes(text) > room {
		c.log.Warn("a message was longer than Discord's 4,000 characters and was cut", "characters", runes(text))
		text = truncate(text, room)
	}
	if len(m.Fields) > 0 {
		return []discordgo.MessageComponent{c.card(m, text, facts, sub)}
	}
	var out []discordgo.MessageComponent
	for _, s := range []string{text, sub} {
		if s != "" {
			out = append(out, discordgo.TextDisplay{Content: s})
		}
	}
	buttons := m.Buttons[:min(len(m.Buttons), rowButtons(maxV2Components-len(out)))]
	return append(out, c.actionRows(buttons)...)
}

// card is an approval card's container (see renderV2).
func (c *Connector) card(m connectors.Message, text string, facts []string, sub string) discordgo.Container {
	accent := accentOf(m)
	box := discordgo.Container{AccentColor: &accent}
	if text != "" {
		box.Components = append(box.Components, discordgo.TextDisplay{Content: text})
	}
	divider := true
	box.Components = append(box.Components, discordgo.Separator{Divider: &divider})
	box.Components = append(box.Components, c.factSections(facts, m.Buttons)...)
	if sub != "" {
		box.Components = append(box.Components, discordgo.TextDisplay{Content: sub})
	}
	// Buttons without a section of their own go in one row under the
	// facts, within the container's ten children and the message's 40
	// components.
	rest := m.Buttons[min(len(m.Buttons), len(facts)):]
	if len(rest) > 0 && len(box.Components) < maxInContainer {
		n := min(len(rest), maxPerRow, rowButtons(maxV2Components-count(box.Components)-1))
		box.Components = append(box.Components, c.actionRows(rest[:n])...)
	}
	return box
}

// accentOf is the colour of m's card: its risk's; a card that names no
// risk is amber while it has buttons to click, blue otherwise.
func accentOf(m connectors.Message) int {
	switch m.Risk {
	case connectors.RiskHigh:
		return accentHigh
	case connectors.RiskAsk:
		return accentAsk
	case connectors.RiskApproved:
		return accentApproved
	case connectors.RiskClosed:
		return accentClosed
	}
	if len(m.Buttons) > 0 {
		return accentAsk
	}
	return accentInfo
}

// factSections are a card's facts, each its own text display, in
// sections whose accessories are the card's buttons in order: a section
// per fact while there are buttons enough, else the facts shared evenly
// among one section per button, up to three to a section (Discord's
// limit), and any left over below them. Discord takes no section without
// an accessory, so a card without buttons shows its facts as text
// displays.
func (c *Connector) factSections(facts []string, buttons []connectors.Button) []discordgo.MessageComponent {
	var out []discordgo.MessageComponent
	n := min(len(facts), len(buttons))
	for i := range n {
		k := min(maxSectionTexts, (len(facts)+n-i-1)/(n-i))
		var texts []discordgo.MessageComponent
		for _, f := range facts[:k] {
			texts = append(texts, discordgo.TextDisplay{Content: f})
		}
		out = append(out, discordgo.Section{Components: texts, Accessory: c.button(buttons[i])})
		facts = facts[k:]
	}
	for _, f := range facts {
		out = append(out, discordgo.TextDisplay{Content: f})
	}
	return out
}

// factLines are a card's fields as lines "**Title**: value": the first
// maxFactsV2 one each, the rest joined in one more.
func factLines(fields []connectors.Field) []string {
	var lines []string
	for _, f := range fields {
		lines = append(lines, truncate("**"+plainText(f.Title)+"**: "+renderMentions(f.Value), maxFactV2))
	}
	if len(lines) <= maxFactsV2 {
		return lines
	}
	rest := truncate(strings.Join(lines[maxFactsV2:], "\n"), maxRestV2)
	return append(lines[:maxFactsV2], rest)
}

// button is b as Discord shows it.
func (c *Connector) button(b connectors.Button) discordgo.Button {
	return discordgo.Button{Label: truncate(b.Label, maxLabel), Style: buttonStyle(b.Style), CustomID: c.customID(b)}
}

// rowButtons is how many buttons fit in action rows of five within n
// components (each row is one more).
func rowButtons(n int) int {
	b := 0
	for n >= 2 {
		k := min(maxPerRow, n-1)
		b, n = b+k, n-k-1
	}
	return b
}

// count is how many components cs hold, at every depth, as Discord
// counts them against its 40.
func count(cs []discordgo.MessageComponent) int {
	n := 0
	for _, x := range cs {
		n++
		switch v := x.(type) {
		case discordgo.Container:
			n += count(v.Components)
		case discordgo.ActionsRow:
			n += count(v.Components)
		case discordgo.Section:
			n += count(v.Components) + 1
		}
	}
	return n
}

// runes is the number of characters in ss together.
func runes(ss ...string) int {
	n := 0
	for _, s := range ss {
		n += utf8.RuneCountInString(s)
	}
	return n
}
