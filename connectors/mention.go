package connectors

import (
	"net/url"
	"regexp"
	"slices"
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
	// groupMark opens a group's placeholder; an escaped id never holds it.
	groupMark = "\uE002"
)

// GroupMention is the placeholder that names group id (a Slack user
// group's id, a Discord role's id) in a Message's Text: the connector
// shows it as its platform's group mention, others as the plain id.
func GroupMention(id string) string {
	return mentionOpen + groupMark + url.PathEscape(id) + mentionClose
}

// Mention is the placeholder that names person id (the platform's user
// id) in a Message's Text.
func Mention(id string) string {
	return mentionOpen + url.PathEscape(id) + mentionClose
}

// RenderMentions replaces every person's placeholder in text by
// render(id) and every group's by its plain id. A broken placeholder (an
// open without its close) is dropped, so nothing of the placeholder's
// syntax ever shows.
func RenderMentions(text string, render func(id string) string) string {
	return RenderAllMentions(text, render, func(id string) string { return id })
}

// RenderAllMentions is RenderMentions with groups' placeholders replaced
// by group(id).
func RenderAllMentions(text string, render, group func(id string) string) string {
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
		esc, isGroup := strings.CutPrefix(esc, groupMark)
		if id, err := url.PathUnescape(esc); err == nil && !strings.Contains(esc, mentionOpen) && !strings.Contains(esc, groupMark) {
			if isGroup {
				b.WriteString(group(id))
			} else {
				b.WriteString(render(id))
			}
		}
		text = after
	}
}

// PlainMentions renders every mention as @id: for text read by the model,
// logs and places that know no platform.
func PlainMentions(text string) string {
	return RenderMentions(text, func(id string) string { return "@" + id })
}

// platformMention matches what Slack and Discord put in a message's text
// for a mention: a user (<@U…>, <@U…|name>, Discord's <@!…>), a group or
// role (<!subteam^S…>, <@&…>), or everyone (<!here>, <!channel>,
// <!everyone>, and Discord's bare @everyone and @here). The first group
// is the mentioned user's id where it is one.
var platformMention = regexp.MustCompile(`<@!?([A-Za-z0-9]+)(?:\|[^>]*)?>|<@&[0-9]+>|<!subteam\^[A-Za-z0-9]+(?:\|[^>]*)?>|<!(?:here|channel|everyone)(?:\|[^>]*)?>|(?:^|[^\w<])@(?:everyone|here)\b`)

// MentionsOther reports whether text, in Slack's or Discord's markup,
// mentions anyone other than the bot: a user whose id is not one of
// botIDs, a group or role, or everyone. It fills Event.MentionsOthers.
// Pass the bot's own user id; a role mention is always someone else's
// (the connector tells a mention of the bot's own role first).
func MentionsOther(text string, botIDs ...string) bool {
	for _, m := range platformMention.FindAllStringSubmatch(text, -1) {
		if m[1] == "" || !slices.Contains(botIDs, m[1]) {
			return true
		}
	}
	return false
}
