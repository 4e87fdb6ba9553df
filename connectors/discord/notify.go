package discord

import (
	"regexp"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// notifyShape is a mention Discord notifies, of a user (<@ID>) or a role
// (<@&ID>); the group is "&" for a role, the second the id. Nothing else
// of Message.Notify is sent: @everyone and @here are never, and a Slack
// mention would show as text.
var notifyShape = regexp.MustCompile(`^<@(&?)([0-9]{17,20})>$`)

// pings are the mentions of a message's Notify that Discord notifies.
type pings struct {
	prefix       string // the mentions, joined, for the start of the content
	users, roles []string
}

// notifyPings picks the Discord mentions of notify.
func notifyPings(notify []string) pings {
	var p pings
	var shown []string
	for _, n := range notify {
		m := notifyShape.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		shown = append(shown, n)
		if m[1] == "&" {
			p.roles = append(p.roles, m[2])
		} else {
			p.users = append(p.users, m[2])
		}
	}
	p.prefix = strings.Join(shown, " ")
	return p
}

// allowedMentions lets the message ping the requester and the users and
// roles of its Notify, and no one else: text from a command's output can
// never ping @everyone, a role or anyone else.
func allowedMentions(requester string, m connectors.Message) *discordgo.MessageAllowedMentions {
	am := &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
	if isSnowflake(requester) {
		am.Users = []string{requester}
	}
	p := notifyPings(m.Notify)
	for _, u := range p.users {
		if !slices.Contains(am.Users, u) {
			am.Users = append(am.Users, u)
		}
	}
	am.Roles = p.roles
	return am
}

// broadcast is m as a message at the top of the channel that names the
// thread it belongs to: Discord cannot show a thread reply in its
// channel (Slack's reply_broadcast), so a change that must be heard is
// posted where the channel's members are, with a link to the thread.
func broadcast(m connectors.Message, thread string) connectors.Message {
	m.Text += "\n-# in <#" + thread + ">"
	return m
}
