package discord

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// onInteraction turns a button click into an event. It acknowledges the
// click first, with a deferred update (type 6: "the card will change"),
// within Discord's 3 seconds and before any other call; the card is then
// edited with the bot's token, which outlives the interaction token's 15
// minutes. A replayed interaction (a RESUME's copy) is handed on like the
// first: the bot drops it by its id.
func (c *Connector) onInteraction(i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionMessageComponent || i.Message == nil {
		return
	}
	h, ctx, _ := c.handlerState()
	if h == nil {
		return
	}
	ack := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	if err := c.rest.InteractionRespond(i.Interaction, ack, discordgo.WithContext(ctx)); err != nil {
		c.log.Warn("a click could not be acknowledged; it is acted on all the same", "err", plain(err))
	}
	action, value, ok := c.parseCustomID(i.MessageComponentData().CustomID)
	if !ok {
		c.respond(ctx, i.Interaction, "This button is from before opsbot restarted and no longer works; ask again in the thread.")
		return
	}
	ev := connectors.Event{ID: i.ID, Kind: connectors.EventAction, Platform: Platform, Workspace: i.GuildID,
		User: person(i.User, i.Member), ActionID: action, Value: value}
	ev.Channel, ev.Thread = i.ChannelID, i.ChannelID // a direct message
	if i.GuildID != "" {
		info, err := c.channel(ctx, i.ChannelID)
		if err != nil {
			c.log.Warn("a click is dropped: its channel could not be looked up", "channel", i.ChannelID, "err", plain(err))
			c.respond(ctx, i.Interaction, "Discord did not say where this button is; click again in a moment.")
			return
		}
		ev.Channel, ev.Thread = i.ChannelID, i.Message.ID // a message at the top of a channel
		if info.thread {
			ev.Channel, ev.Thread = info.parent, i.ChannelID
		}
	}
	ev.Ref = connectors.Ref{Platform: Platform, Workspace: i.GuildID, Channel: ev.Channel, Thread: ev.Thread, ID: i.Message.ID}
	interaction := i.Interaction
	ev.Respond = func(ctx context.Context, text string) error { return c.respond(ctx, interaction, text) }
	h(ctx, ev)
}

// respond answers the clicker alone: an ephemeral followup, made with the
// interaction's token (valid 15 minutes).
func (c *Connector) respond(ctx context.Context, i *discordgo.Interaction, text string) error {
	content := truncate(renderMentions(text), maxContent)
	params := &discordgo.WebhookParams{Content: content, Flags: discordgo.MessageFlagsEphemeral,
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}}
	if _, err := c.rest.FollowupMessageCreate(i, false, params, discordgo.WithContext(ctx)); err != nil {
		err = apiError("answering a click", err)
		c.log.Warn("a reply to a click was not shown", "err", err)
		return err
	}
	return nil
}

// customID is what a button carries back: its action and value. One too
// long for Discord's 100 characters carries a digest instead, which this
// process remembers (a click on it after a restart is refused politely).
func (c *Connector) customID(b connectors.Button) string {
	id := b.ActionID + ":" + b.Value
	if len(id) <= maxCustomID && !strings.HasPrefix(id, "#") {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	key := "#" + base64.RawURLEncoding.EncodeToString(sum[:18])
	c.mu.Lock()
	c.custom[key] = [2]string{b.ActionID, b.Value}
	c.mu.Unlock()
	return key
}

// parseCustomID is customID undone.
func (c *Connector) parseCustomID(id string) (action, value string, ok bool) {
	if strings.HasPrefix(id, "#") {
		c.mu.Lock()
		av, found := c.custom[id]
		c.mu.Unlock()
		return av[0], av[1], found
	}
	action, value, ok = strings.Cut(id, ":")
	return action, value, ok
}
