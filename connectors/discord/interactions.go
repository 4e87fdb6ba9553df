package discord

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// onInteraction turns a button click into an event: it hands the click
// to the handler (which records it) and then acknowledges it with a
// deferred update (type 6: "the card will change") within Discord's 3
// seconds; the card is then edited with the bot's token, which outlives
// the interaction token's 15 minutes. A replayed interaction (a RESUME's
// copy) is handed on like the first: the bot drops it by its id, and its
// second acknowledgement is refused by Discord, harmlessly.
func (c *Connector) onInteraction(i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionMessageComponent || i.Message == nil {
		return
	}
	h, ctx, _ := c.handlerState()
	if h == nil {
		return
	}
	acked := make(chan struct{})
	ack := func() {
		resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
		if err := c.rest.InteractionRespond(i.Interaction, resp, discordgo.WithContext(ctx)); err != nil && restCode(err) != codeAlreadyAcked {
			c.log.Warn("a click could not be acknowledged in time; Discord told the person it failed", "err", plain(err))
		}
		close(acked)
	}
	ev, refusal := c.clickEvent(ctx, i)
	if refusal != "" {
		ack()
		c.respond(ctx, i.Interaction, refusal)
		return
	}
	interaction := i.Interaction
	ev.Respond = func(ctx context.Context, text string) error {
		select { // a followup needs the click acknowledged first
		case <-acked:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		return c.respond(ctx, interaction, text)
	}
	err := h(ctx, ev)
	ack()
	if err != nil {
		// Not on record, so not acted on: the clicker alone is told, and
		// presses again.
		c.log.Error("a click was not recorded; the clicker is asked to press again", "err", err)
		c.respond(ctx, interaction, notRecorded("this click", err)+" Press the button again.")
	}
}

// notRecorded says in words that the bot did not take what (the
// Handler's error names why).
func notRecorded(what string, err error) string {
	why := strings.TrimPrefix(err.Error(), connectors.ErrNotRecorded.Error()+": ")
	return "opsbot could not record " + what + ", so it did nothing with it (" + why + ")."
}

// clickEvent is the neutral event of a click, or why it cannot be acted
// on, for the clicker.
func (c *Connector) clickEvent(ctx context.Context, i *discordgo.InteractionCreate) (connectors.Event, string) {
	action, value, ok := c.parseCustomID(i.MessageComponentData().CustomID)
	if !ok {
		return connectors.Event{}, "This button is from before opsbot restarted and no longer works; ask again in the thread."
	}
	ev := connectors.Event{ID: i.ID, Kind: connectors.EventAction, Platform: Platform, Workspace: i.GuildID,
		User: person(i.User, i.Member), ActionID: action, Value: value}
	ev.Channel, ev.Thread = i.ChannelID, i.ChannelID // a direct message
	if i.GuildID != "" {
		// The lookup is cached after a thread's first message; it is bounded
		// so that the acknowledgement keeps its 3 seconds.
		lookup, cancel := context.WithTimeout(ctx, lookupTimeout)
		info, err := c.channel(lookup, i.ChannelID)
		cancel()
		if err != nil {
			c.log.Warn("a click is dropped: its channel could not be looked up", "channel", i.ChannelID, "err", plain(err))
			return connectors.Event{}, "Discord did not say where this button is; click again in a moment."
		}
		ev.Channel, ev.Thread = i.ChannelID, i.Message.ID // a message at the top of a channel
		if info.thread {
			ev.Channel, ev.Thread = info.parent, i.ChannelID
		}
	}
	ev.Ref = connectors.Ref{Platform: Platform, Workspace: i.GuildID, Channel: ev.Channel, Thread: ev.Thread, ID: i.Message.ID}
	return ev, ""
}

// lookupTimeout bounds a click's channel lookup.
const lookupTimeout = 1500 * time.Millisecond

// codeAlreadyAcked is Discord's answer to a second acknowledgement.
const codeAlreadyAcked = 40060

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
