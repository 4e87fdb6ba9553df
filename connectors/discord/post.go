package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// Discord's JSON error codes the connector acts on.
const (
	codeUnknownChannel    = 10003
	codeInvalidForm       = 50035
	codeThreadAlreadyMade = 160004
)

// archiveAfter is how long a thread opsbot opens stays in the channel's
// list without activity: a day, in minutes.
const archiveAfter = 1440

// Post adds m to d's thread: a thread opsbot is to open from a mention is
// opened first; d.Thread "" posts at the top of d.Channel, and the thread
// later opened from that message is named m.ThreadName. A Broadcast
// message goes to the top of d.Channel, naming its thread.
func (c *Connector) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	if m.Broadcast && d.Thread != "" && d.Thread != d.Channel {
		m, d.Thread = broadcast(m, d.Thread), ""
	}
	target := d.Channel
	if d.Thread != "" {
		target = d.Thread
	}
	inThread := d.Thread != "" && d.Thread != d.Channel
	if inThread {
		if err := c.openThread(ctx, d.Channel, d.Thread, false); err != nil {
			return connectors.Ref{}, err
		}
	}
	send := c.sender(target, m, allowedMentions(d.Recipient.ID, m))
	msg, err := send(ctx)
	if inThread && restCode(err) == codeUnknownChannel {
		// A mention from before a restart: its thread was never opened.
		if err = c.openThread(ctx, d.Channel, d.Thread, true); err == nil {
			msg, err = send(ctx)
		}
	}
	if err != nil {
		return connectors.Ref{}, apiError("posting a message", err)
	}
	ref := connectors.Ref{Platform: Platform, Workspace: d.Workspace, Channel: d.Channel, Thread: d.Thread, ID: msg.ID}
	if ref.Thread == "" {
		ref.Thread = msg.ID // a message at the top of a channel is its own thread's root
		if m.ThreadName != "" {
			c.expectThread(msg.ID, truncate(m.ThreadName, maxThreadName))
		}
	}
	return ref, nil
}

// sender posts m in channel target when called: with Components V2 (the
// flag, components, no content nor embeds: see renderV2) unless the
// config turned them off. discordgo's MessageSend always carries embeds
// and stickers, which a V2 message may not, so a V2 post is marshalled
// here.
func (c *Connector) sender(target string, m connectors.Message, allowed *discordgo.MessageAllowedMentions) func(context.Context) (*discordgo.Message, error) {
	if !c.cfg.V2() {
		r := c.render(m)
		send := &discordgo.MessageSend{Content: r.content, Embeds: r.embeds, Components: r.components, AllowedMentions: allowed}
		return func(ctx context.Context) (*discordgo.Message, error) {
			return c.rest.ChannelMessageSendComplex(target, send, discordgo.WithContext(ctx))
		}
	}
	body := v2Message{Flags: discordgo.MessageFlagsIsComponentsV2, Components: c.renderV2(m), AllowedMentions: allowed}
	return func(ctx context.Context) (*discordgo.Message, error) {
		endpoint := discordgo.EndpointChannelMessages(target)
		resp, err := c.rest.RequestWithBucketID(http.MethodPost, endpoint, body, endpoint, discordgo.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		var msg discordgo.Message
		if err := json.Unmarshal(resp, &msg); err != nil {
			return nil, fmt.Errorf("reading Discord's answer: %w", err)
		}
		return &msg, nil
	}
}

// v2Message is a Components V2 message's body.
type v2Message struct {
	Flags           discordgo.MessageFlags            `json:"flags"`
	Components      []discordgo.MessageComponent      `json:"components"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
}

// Edit replaces a posted message, its buttons and fields included. The
// edit of a V2 message carries the flag again and its components, never
// content or embeds, which Discord refuses on it. A message posted the
// legacy way (before components_v2 was on: a card still pending across
// the upgrade) may not take the flag: when Discord refuses the V2 edit as
// an invalid form, the legacy edit is tried once.
func (c *Connector) Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	v2 := c.cfg.V2()
	_, err := c.rest.ChannelMessageEditComplex(c.edit(ref, m, v2), discordgo.WithContext(ctx))
	if v2 && restCode(err) == codeInvalidForm {
		c.log.Info("a message from before Components V2 is edited the legacy way", "message", ref.ID)
		_, err = c.rest.ChannelMessageEditComplex(c.edit(ref, m, false), discordgo.WithContext(ctx))
	}
	if err != nil {
		return apiError("editing a message", err)
	}
	return nil
}

// edit is the edit of ref to m, in V2 or the legacy rendering.
func (c *Connector) edit(ref connectors.Ref, m connectors.Message, v2 bool) *discordgo.MessageEdit {
	e := &discordgo.MessageEdit{ID: ref.ID, Channel: channelOf(ref), AllowedMentions: allowedMentions("", m)}
	if v2 {
		components := c.renderV2(m)
		e.Flags, e.Components = discordgo.MessageFlagsIsComponentsV2, &components
		return e
	}
	r := c.render(m)
	e.Content, e.Embeds, e.Components = &r.content, &r.embeds, &r.components
	return e
}

// channelOf is the Discord channel that holds the message ref: its
// thread's, unless the message is the root of its thread (a thread opened
// from a message keeps that message in the parent channel).
func channelOf(ref connectors.Ref) string {
	if ref.Thread != "" && ref.Thread != ref.ID {
		return ref.Thread
	}
	return ref.Channel
}

// expectThread notes that a mention's message is to become a thread
// named name when the bot first answers in it.
func (c *Connector) expectThread(messageID, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.channels[messageID]; !known {
		c.pending[messageID] = name
	}
}

// openThread opens the public thread of the message thread in channel,
// once: when the mention was seen by this process (pending), or when
// force says a post found no such thread. A thread someone else opened
// first is taken as it is.
func (c *Connector) openThread(ctx context.Context, channel, thread string, force bool) error {
	mu, _ := c.threads.LoadOrStore(thread, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	c.mu.Lock()
	name, pending := c.pending[thread]
	c.mu.Unlock()
	if !pending && !force {
		return nil
	}
	if name == "" {
		name = "opsbot"
	}
	_, err := c.rest.MessageThreadStartComplex(channel, thread, &discordgo.ThreadStart{Name: name, AutoArchiveDuration: archiveAfter},
		discordgo.WithContext(ctx))
	if err != nil && restCode(err) != codeThreadAlreadyMade {
		return apiError("opening a thread", err)
	}
	c.mu.Lock()
	delete(c.pending, thread)
	c.mu.Unlock()
	c.remember(thread, channelInfo{parent: channel, thread: true})
	c.threads.Delete(thread)
	return nil
}
