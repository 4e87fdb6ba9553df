package connectors

import (
	"net/url"
	"strings"
)

// A mention in a Message's Text is a placeholder between two characters
// of Unicode's private use area, which no platform shows and no model
// writes: the connector that posts the message replaces it with its
// platform's mention (<@U…> on Slack and Discord, @name on the web). The
// person's id is escaped, so a placeholder holds no blank or line break
// and no cut between pages falls inside it.
const (
	mentionOpen  = "\uE000"
	mentionClose = "\uE001"
)

// Mention is the placeholder that names person id (the platform's user
// id) in a Message's Text.
func Mention(id string) string {
	return mentionOpen + url.PathEscape(id) + mentionClose
}

// RenderMentions replaces every placeholder in text by render(id). A
// broken placeholder (an open without its close) is dropped, so nothing
// of the placeholder's syntax ever shows.
func RenderMentions(text string, render func(id string) string) string {
	if !strings.Contains(text, mentionOpen) && !strings.Contains(text, mentionClose) {
		return text
	}
	var b strings.Builder
	for {
		before, rest, found := strings.Cut(text, mentionOpen)
		b.WriteString(strings.ReplaceAll(before, mentionClose, ""))
		if !found {
			return b.String()
		}
		esc, after, closed := strings.Cut(rest, mentionClose)
		if !closed {
			return b.String()
		}
		if id, err := url.PathUnescape(esc); err == nil && !strings.Contains(esc, mentionOpen) {
			b.WriteString(render(id))
		}
		text = after
	}
}

// PlainMentions renders every mention as @id: for text read by the model,
// logs and places that know no platform.
func PlainMentions(text string) string {
	return RenderMentions(text, func(id string) string { return "@" + id })
}
