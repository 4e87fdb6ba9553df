package web

import (
	"regexp"
	"strings"
)

// BotName is how people address the bot in the web chat: @opsbot. No
// person may take it as their name.
const BotName = "opsbot"

// mention matches @opsbot as a word, not inside an address or a longer
// name (ops@opsbot.dev is not one, nor @opsbot-staging).
var mention = regexp.MustCompile(`(?i)(^|[^\w@.])@` + BotName + `([^\w@-]|$)`)

// mentionCut is what stripMention removes: the mention with a following
// comma or colon and blanks ("@opsbot: run …").
var mentionCut = regexp.MustCompile(`(?i)(^|[^\w@.])@` + BotName + `\b[,:]?[ \t]*`)

func mentions(text string) bool { return mention.MatchString(text) }

// stripMention removes the bot's mentions from a message that has one,
// keeping the rest — line breaks included — as written.
func stripMention(text string) string {
	if !mentions(text) {
		return text
	}
	return strings.TrimSpace(mentionCut.ReplaceAllString(text, "$1"))
}
