package slack

import (
	"regexp"
	"strings"
)

// notifyShape is a mention Slack notifies: a person (<@U…>, <@W…> on
// Enterprise Grid), a user group (<!subteam^S…>), or the channel's
// active members (<!here>). Nothing else of Message.Notify is sent: a
// Discord mention or a malformed one would show as text, and <!channel>
// or <!everyone> wake a whole channel, which a health schedule must not.
var notifyShape = regexp.MustCompile(`^<(?:@[UW][A-Z0-9]{2,}|!subteam\^S[A-Z0-9]{2,}|!here)>$`)

// notifyPrefix is the mentions of notify that Slack notifies, joined,
// for the start of a message; "" when there is none.
func notifyPrefix(notify []string) string {
	var out []string
	for _, m := range notify {
		if notifyShape.MatchString(m) {
			out = append(out, m)
		}
	}
	return strings.Join(out, " ")
}
