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

// anyMention matches an @name as a word; the name is its second group.
var anyMention = regexp.MustCompile(`(^|[^\w@.])@([\w][\w.-]*)`)

// mentionsOthers reports whether text mentions someone other than the bot
// (@alice, @here): in a thread with the bot, such a message is for them
// (bot.thread_replies: addressed).
func mentionsOthers(text string) bool {
	for _, m := range anyMention.FindAllStringSubmatch(text, -1) {
		if !strings.EqualFold(strings.TrimRight(m[2], ".-"), BotName) {
			return true
		}
	}
	return false
}

// stripMention removes the bot's mentions from a message that has one,
// keeping the rest — line breaks included — as written.
func stripMention(text string) string {
	if !mentions(text) {
		return text
	}
	return strings.TrimSpace(mentionCut.ReplaceAllString(text, "$1"))
}
