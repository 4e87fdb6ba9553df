package discordtest

import (
	"encoding/json"
	"time"
)

// person is someone on the fake: their id, name and roles in the guild.
type person struct {
	ID, Name string
	Roles    []string
	bot      bool
}

// User is a person who writes and clicks.
type User struct {
	ID, Name string
	// Roles are the person's role ids in the guild.
	Roles []string
}

// NewUser makes a person with roles.
func (f *Fake) NewUser(name string, roles ...string) User {
	f.mu.Lock()
	defer f.mu.Unlock()
	return User{ID: f.id(), Name: name, Roles: roles}
}

// NewRole makes a role id.
func (f *Fake) NewRole() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id()
}

// Mention has u write text in channel (a text channel, a thread or a DM)
// with the bot mentioned first, and returns the message's id.
func (f *Fake) Mention(u User, channel, text string) string {
	return f.say(u, channel, "<@"+f.BotID+"> "+text, []string{f.BotID})
}

// Say has u write text in channel without mentioning the bot; mentions
// are the user ids the text mentions.
func (f *Fake) Say(u User, channel, text string, mentions ...string) string {
	return f.say(u, channel, text, mentions)
}

func (f *Fake) say(u User, channel, text string, mentions []string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	return f.sayLocked(u, channel, text, mentions, nil)
}

// sayLocked posts u's message; mentions are the user ids it mentions,
// roles the role ids (mention_roles).
func (f *Fake) sayLocked(u User, channel, text string, mentions, roles []string) string {
	c := f.channels[channel]
	m := &Message{ID: f.id(), ChannelID: channel, AuthorID: u.ID, Content: text, Created: time.Now()}
	f.messages[m.ID] = m
	c.Messages = append(c.Messages, m.ID)
	var ms []map[string]any
	for _, id := range mentions {
		ms = append(ms, map[string]any{"id": id, "username": "someone"})
	}
	d := f.messageEventLocked(m, person{ID: u.ID, Name: u.Name, Roles: u.Roles}, ms)
	d["mention_roles"] = orEmptyS(roles)
	f.gw.dispatchLocked("MESSAGE_CREATE", d)
	return m.ID
}

// messageEventLocked is MESSAGE_CREATE's payload.
func (f *Fake) messageEventLocked(m *Message, by person, mentions []map[string]any) map[string]any {
	c := f.channels[m.ChannelID]
	d := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0, "timestamp": m.Created.Format(time.RFC3339),
		"author": map[string]any{"id": by.ID, "username": by.Name, "bot": by.bot}, "mentions": orEmpty(mentions), "mention_roles": []string{}}
	if c.GuildID != "" {
		d["guild_id"] = c.GuildID
		d["member"] = map[string]any{"roles": orEmptyS(by.Roles)}
	}
	// Without the Message Content intent Discord sends the text of a
	// message that mentions the bot. Whether a mention of the bot's
	// managed role counts is not documented: the fake takes the strict
	// reading (the bot in mentions), which the connector must survive.
	if !f.gw.hasContent() && c.GuildID != "" && !mentionsBot(mentions, f.BotID) && !by.bot {
		d["content"] = "" // no Message Content intent: Discord leaves the text out
	}
	return d
}

func (g *gateway) hasContent() bool { return g.intents&intentMessageContent != 0 }

func mentionsBot(ms []map[string]any, bot string) bool {
	for _, m := range ms {
		if m["id"] == bot {
			return true
		}
	}
	return false
}

func orEmpty(v []map[string]any) []map[string]any {
	if v == nil {
		return []map[string]any{}
	}
	return v
}

func orEmptyS(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// Click has u click the button whose custom_id is customID on message;
// it returns the interaction's id. Discord waits InteractionDeadline for
// the acknowledgement.
func (f *Fake) Click(u User, message, customID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.id()
	f.dispatchClickLocked(id, token(), u, message, customID)
	return id
}

// Replay delivers interaction id again (as a RESUME's replay or a
// duplicate delivery would), with the same id and token.
func (f *Fake) Replay(interaction string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cl := f.clicks[interaction]
	f.gw.dispatchLocked("INTERACTION_CREATE", cl.payload)
}

func (f *Fake) dispatchClickLocked(id, tok string, u User, message, customID string) {
	m := f.messages[message]
	c := f.channels[m.ChannelID]
	user := map[string]any{"id": u.ID, "username": u.Name}
	d := map[string]any{"id": id, "application_id": f.AppID, "type": 3, "token": tok, "version": 1, "channel_id": c.ID,
		"data":    map[string]any{"custom_id": customID, "component_type": 2},
		"message": map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0, "author": map[string]any{"id": m.AuthorID, "username": "opsbot", "bot": m.Bot}}}
	if c.GuildID != "" {
		d["guild_id"] = c.GuildID
		d["member"] = map[string]any{"user": user, "roles": orEmptyS(u.Roles)}
	} else {
		d["user"] = user // a DM: no member, no roles
	}
	payload, _ := json.Marshal(d)
	f.clicks[id] = &click{id: id, token: tok, messageID: message, userID: u.ID, at: time.Now(), payload: payload}
	f.gw.dispatchLocked("INTERACTION_CREATE", json.RawMessage(payload))
}

// Buttons are the custom_ids of message's buttons, in order.
func (f *Fake) Buttons(message string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ButtonsLocked(message)
}

// ButtonsLocked is Buttons for a Wait condition.
func (f *Fake) ButtonsLocked(message string) []string {
	m, ok := f.messages[message]
	if !ok {
		return nil
	}
	return buttonsOf(m.Components)
}

// Forward has u forward a message of text (from another channel) into
// channel, as Discord sends it: no content of its own, a message_reference
// of type 1 (forward) and the forwarded message in message_snapshots.
// Without the Message Content intent a guild's forward comes without its
// text, like any message that does not mention the bot.
func (f *Fake) Forward(u User, channel, text string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	c := f.channels[channel]
	m := &Message{ID: f.id(), ChannelID: channel, AuthorID: u.ID, Created: time.Now()}
	f.messages[m.ID] = m
	c.Messages = append(c.Messages, m.ID)
	d := f.messageEventLocked(m, person{ID: u.ID, Name: u.Name, Roles: u.Roles}, nil)
	if !f.gw.hasContent() && c.GuildID != "" {
		text = ""
	}
	from := f.id()
	d["message_reference"] = map[string]any{"type": 1, "channel_id": from, "message_id": f.id()}
	d["message_snapshots"] = []any{map[string]any{"message": map[string]any{"content": text, "type": 0,
		"timestamp": m.Created.Format(time.RFC3339), "mentions": []any{}, "embeds": []any{}, "attachments": []any{}}}}
	f.gw.dispatchLocked("MESSAGE_CREATE", d)
	return m.ID
}
