package discord

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// channelInfo is what the connector needs of a channel a message came in.
type channelInfo struct {
	// parent is the text channel a thread hangs from ("" for others).
	parent string
	thread bool
}

// maxCachedChannels bounds the channel cache; past it the cache starts
// over (a lookup is one GET).
const maxCachedChannels = 10_000

// handlerState is what an event handler needs, read under the lock:
// discordgo runs each handler in a goroutine of its own.
func (c *Connector) handlerState() (connectors.Handler, context.Context, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handler, c.ctx, c.botID
}

// onMessage turns a MESSAGE_CREATE into an event, on the connector's one
// worker, in the gateway's order. A thread's parent is asked of the API,
// not remembered from THREAD_CREATE; the bot's role in the guild comes
// from the guild events read before the message (see botRoles); and the
// bot deduplicates by message id the copies a RESUME replays. A message
// forwarded into a thread comes quoted after the person's own words (see
// withForwards); a mention in it is not the person's.
func (c *Connector) onMessage(m *discordgo.MessageCreate) {
	h, ctx, botID := c.handlerState()
	if h == nil || m.Author == nil || m.Author.Bot || m.Author.ID == botID {
		return // the bot's own messages and other bots'
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return // system messages: a thread created, a pin
	}
	dm := m.GuildID == ""
	mention, text := c.addressed(m.Message, botID)
	mention = mention || dm
	if !mention && !c.cfg.MessageContent {
		return // Discord sends no text without the Message Content intent
	}
	ev := connectors.Event{ID: m.ID, Kind: connectors.EventMessage, Platform: Platform, Workspace: m.GuildID,
		User: person(m.Author, m.Member), Text: withForwards(withoutMention(text, botID), m.Message), Mention: mention,
		MentionsOthers: connectors.MentionsOther(text, botID)}
	switch {
	case dm:
		ev.Channel, ev.Thread = m.ChannelID, m.ChannelID
	default:
		info, err := c.channel(ctx, m.ChannelID)
		if err != nil {
			c.log.Warn("a message is dropped: its channel could not be looked up", "channel", m.ChannelID, "err", plain(err))
			return
		}
		if info.thread {
			ev.Channel, ev.Thread = info.parent, m.ChannelID
			break
		}
		if !mention {
			return // only a mention opens a thread in a channel
		}
		ev.Channel, ev.Thread = m.ChannelID, m.ID
		c.expectThread(m.ID, threadName(ev.Text))
	}
	if err := h(ctx, ev); err != nil {
		// Discord does not deliver a message again: the person is told,
		// where they wrote, to send it again.
		c.log.Error("a message was not recorded; its author is asked to send it again", "err", err)
		d := connectors.Dest{Platform: Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread}
		c.Post(ctx, d, connectors.Message{Text: notRecorded("this message", err) + " Send it again."})
	}
}

// addressed reports whether guild message m mentions the bot: its user,
// or its managed role (picked in Discord's mention list as "@opsbot"); it
// returns m's text without the role's mention. Another role the bot holds
// is not the bot.
func (c *Connector) addressed(m *discordgo.Message, botID string) (bool, string) {
	byUser := slices.ContainsFunc(m.Mentions, func(u *discordgo.User) bool { return u.ID == botID })
	role := ""
	if m.GuildID != "" {
		role = c.roles.of(m.GuildID)
	}
	if !roleMentioned(m, role) {
		return byUser, m.Content
	}
	return true, strings.ReplaceAll(m.Content, roleMarkup(role), "")
}

// channel says what channel id is, from the cache or the API.
func (c *Connector) channel(ctx context.Context, id string) (channelInfo, error) {
	c.mu.Lock()
	info, ok := c.channels[id]
	c.mu.Unlock()
	if ok {
		return info, nil
	}
	ch, err := c.rest.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return channelInfo{}, err
	}
	info = channelInfo{thread: ch.IsThread()}
	if info.thread {
		info.parent = ch.ParentID
	}
	c.remember(id, info)
	return info, nil
}

func (c *Connector) remember(id string, info channelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.channels) >= maxCachedChannels {
		clear(c.channels)
	}
	c.channels[id] = info
}

// person is a message's or a click's author with their roles (a guild
// member's; nobody has roles in a direct message).
func person(u *discordgo.User, m *discordgo.Member) connectors.User {
	if u == nil && m != nil {
		u = m.User
	}
	if u == nil {
		return connectors.User{}
	}
	p := connectors.User{ID: u.ID, Name: u.Username}
	if u.GlobalName != "" {
		p.Name = u.GlobalName
	}
	if m != nil {
		if m.Nick != "" {
			p.Name = m.Nick
		}
		p.Groups = slices.Clone(m.Roles)
	}
	return p
}

// withoutMention is a message's text as the bot reads it: without the
// bot's mention (<@id> or the older <@!id>), other people as mention
// placeholders (connectors.Mention), as Slack's connector gives them, so
// no platform markup reaches a command or the model.
func withoutMention(text, botID string) string {
	text = userMention.ReplaceAllStringFunc(text, func(m string) string {
		id := userMention.FindStringSubmatch(m)[1]
		if botID != "" && id == botID {
			return ""
		}
		return connectors.Mention(id)
	})
	return strings.TrimSpace(spaces.ReplaceAllString(text, " "))
}

// userMention is a Discord user's mention; its group is the user id.
var userMention = regexp.MustCompile(`<@!?([0-9]+)>`)

var spaces = regexp.MustCompile(`[ \t]{2,}`)

// threadName is a thread's name from the question: its first line, at
// most 100 characters.
func threadName(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "opsbot"
	}
	if utf8.RuneCountInString(line) <= maxThreadName {
		return line
	}
	r := []rune(line)
	return strings.TrimSpace(string(r[:maxThreadName-1])) + "…"
}
