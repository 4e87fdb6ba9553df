package discord

import (
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// Embed limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
const (
	maxFieldName  = 256
	maxFieldValue = 1024
	maxFields     = 25
	maxFooter     = 2048
	maxLabel      = 80
)

// rendered is a neutral Message the Discord way.
type rendered struct {
	content    string
	embeds     []*discordgo.MessageEmbed
	components []discordgo.MessageComponent
}

// render turns m into Discord's message parts: Text (already CommonMark,
// which Discord shows) as content with people as <@id>; the context line
// as subtext ("-# …") under it, or as an embed's footer when the content
// has no room left; fields as an embed's inline fields; buttons as action
// rows of at most five. The mentions of m.Notify open the content.
func (c *Connector) render(m connectors.Message) rendered {
	r := rendered{content: renderMentions(m.Text)}
	if p := notifyPings(m.Notify); p.prefix != "" {
		r.content = p.prefix + " " + r.content
	}
	var embed *discordgo.MessageEmbed
	if len(m.Fields) > 0 {
		embed = &discordgo.MessageEmbed{}
		for _, f := range m.Fields[:min(len(m.Fields), maxFields)] {
			embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{
				Name: truncate(plainText(f.Title), maxFieldName), Value: truncate(renderMentions(f.Value), maxFieldValue), Inline: true})
		}
	}
	if ctx := renderMentions(m.Context); ctx != "" {
		sub := "-# " + strings.ReplaceAll(ctx, "\n", " ")
		switch {
		case r.content == "":
			r.content = sub
		case utf8.RuneCountInString(r.content)+1+utf8.RuneCountInString(sub) <= maxContent:
			r.content += "\n" + sub
		default:
			if embed == nil {
				embed = &discordgo.MessageEmbed{}
			}
			embed.Footer = &discordgo.MessageEmbedFooter{Text: truncate(ctx, maxFooter)}
		}
	}
	if utf8.RuneCountInString(r.content) > maxContent {
		c.log.Warn("a message was longer than Discord's 2,000 characters and was cut", "characters", utf8.RuneCountInString(r.content))
		r.content = truncate(r.content, maxContent)
	}
	r.embeds = []*discordgo.MessageEmbed{}
	if embed != nil {
		r.embeds = append(r.embeds, embed)
	}
	r.components = c.actionRows(m.Buttons)
	return r
}

// actionRows lays buttons out five to a row, five rows at most.
func (c *Connector) actionRows(buttons []connectors.Button) []discordgo.MessageComponent {
	rows := []discordgo.MessageComponent{}
	buttons = buttons[:min(len(buttons), maxPerRow*maxRows)]
	for len(buttons) > 0 {
		n := min(len(buttons), maxPerRow)
		row := discordgo.ActionsRow{}
		for _, b := range buttons[:n] {
			row.Components = append(row.Components, c.button(b))
		}
		rows = append(rows, row)
		buttons = buttons[n:]
	}
	return rows
}

func buttonStyle(s connectors.ButtonStyle) discordgo.ButtonStyle {
	switch s {
	case connectors.StylePrimary:
		return discordgo.PrimaryButton
	case connectors.StyleDanger:
		return discordgo.DangerButton
	}
	return discordgo.SecondaryButton
}

// renderMentions shows a person named by connectors.Mention as <@id> when
// id is a Discord user id (a snowflake), else as @id (a person of another
// platform, named in a card); a group (connectors.GroupMention) as the
// role's mention <@&id>, else its plain name.
func renderMentions(text string) string {
	return connectors.RenderAllMentions(text, func(id string) string {
		if isSnowflake(id) {
			return "<@" + id + ">"
		}
		return "@" + id
	}, func(id string) string {
		if isSnowflake(id) {
			return "<@&" + id + ">"
		}
		return id
	})
}

// plainText is text with its mentions as @id (a field's title shows no
// mention).
func plainText(text string) string { return connectors.PlainMentions(text) }

func isSnowflake(id string) bool {
	if id == "" || len(id) > 20 {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// truncate keeps at most n characters of s, the last being "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
