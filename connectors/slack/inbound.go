package slack

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// inboxSize bounds the events not yet handed on: each is small, and the
// Handler takes them at once.
const inboxSize = 4096

// inbound is an event on its way to the Handler, and how to acknowledge
// it to Slack once the Handler has it on record.
type inbound struct {
	ev connectors.Event
	// ack acknowledges the event when err is nil; with an error it leaves
	// it unacknowledged, and Slack delivers it again.
	ack func(err error)
}

// errInboxFull is an event's error when too many wait for the Handler.
var errInboxFull = errors.New("slack: too many events waiting")

// accept queues an event for the Handler; it never blocks (it runs where
// Slack waits for the acknowledgement). One that does not fit is not
// acknowledged: Slack delivers it again.
func (c *Connector) accept(in inbound) {
	select {
	case c.inbox <- in:
	default:
		c.log.Error("slack: too many events waiting; this one is left unacknowledged, for Slack to deliver again", "event", in.ev.ID)
		in.ack(errInboxFull)
	}
}

// deliver hands queued events to the Handler in the order they came,
// with the person's name (users.info, cached) and, for a click, the user
// groups approver rules name.
func (c *Connector) deliver(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case in := <-c.inbox:
			r := c.dispatch.Load()
			ev := in.ev
			// Slack waits for the ack until the Handler has the event on
			// record (up to 2 s): the lookups before it get a bound of
			// their own, so the two stay within Slack's 3 s.
			lctx, cancel := context.WithTimeout(ctx, lookupLimit)
			ev.User.Name = c.ppl.name(lctx, ev.User.ID)
			if ev.Kind == connectors.EventAction {
				ev.User.Groups = c.ppl.groupsOf(lctx, ev.User.ID)
			}
			cancel()
			err := r.h(r.ctx, ev)
			if err != nil {
				c.log.Error("slack: an event was not recorded; it is left unacknowledged, for Slack to deliver again", "event", ev.ID, "err", err)
			}
			in.ack(err)
		}
	}
}

// callback is the Events API's outer event (event_callback), as both
// Socket Mode's events_api payload and HTTP mode's body carry it.
type callback struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	TeamID    string `json:"team_id"`
	EventID   string `json:"event_id"`
	Event     struct {
		Type        string `json:"type"`
		Subtype     string `json:"subtype"`
		User        string `json:"user"`
		BotID       string `json:"bot_id"`
		Text        string `json:"text"`
		TS          string `json:"ts"`
		ThreadTS    string `json:"thread_ts"`
		Channel     string `json:"channel"`
		ChannelType string `json:"channel_type"`
		// AssistantThread is assistant_thread_started's thread.
		AssistantThread struct {
			ChannelID string `json:"channel_id"`
			ThreadTS  string `json:"thread_ts"`
		} `json:"assistant_thread"`
	} `json:"event"`
}

// message turns an event callback into the bot's event; false when it is
// not for the bot:
//   - app_mention starts or continues the thread's session (its root:
//     thread_ts, else ts);
//   - a direct message (message.im) is addressed to the bot;
//   - a reply in a thread is handed on unaddressed (the bot decides
//     whether it follows the thread); its copy of a mention is dropped,
//     as is a channel message outside a thread;
//   - the bot's own and other bots' messages, and edits, deletions and
//     other subtypes, are ignored;
//   - assistant_thread_started is answered by the connector itself
//     (assistant.go), and the first question of such a thread titles it.
func (c *Connector) message(cb callback) (connectors.Event, bool) {
	e := cb.Event
	if e.Type == "assistant_thread_started" {
		c.threadStarted(cb)
		return connectors.Event{}, false
	}
	self := c.botUser()
	if e.User == "" || e.User == self || e.BotID != "" {
		return connectors.Event{}, false
	}
	switch e.Subtype {
	case "", "thread_broadcast", "file_share":
	default:
		return connectors.Event{}, false
	}
	mentioned := self != "" && strings.Contains(e.Text, "<@"+self)
	ev := connectors.Event{ID: cb.EventID, Kind: connectors.EventMessage, Platform: Platform, Workspace: cb.TeamID,
		Channel: e.Channel, Thread: e.ThreadTS, User: connectors.User{ID: e.User}, Text: c.plainText(e.Text)}
	if ev.Thread == "" {
		ev.Thread = e.TS
	}
	// The question itself, for the sign that it is taken (signs.go).
	ev.Ref = connectors.Ref{Platform: Platform, Workspace: cb.TeamID, Channel: e.Channel, Thread: ev.Thread, ID: e.TS}
	ev.MentionsOthers = connectors.MentionsOther(e.Text, self)
	switch {
	case e.Type == "app_mention" && !isDM(e.Channel):
		ev.Mention = true
	case e.Type == "message" && (e.ChannelType == "im" || isDM(e.Channel)):
		ev.Mention = true
	case e.Type == "message" && !mentioned && e.ThreadTS != "":
	default:
		return connectors.Event{}, false
	}
	c.titleFrom(ev)
	return ev, true
}

var reMention = regexp.MustCompile(`<@([UW][A-Z0-9]+)(?:\|[^>]*)?>`)

// plainText is a message's text as the bot reads it: the bot's own
// mention removed, other people as mention placeholders (so the bot can
// tell a message for someone else), Slack's escapes undone.
func (c *Connector) plainText(text string) string {
	self := c.botUser()
	text = reMention.ReplaceAllStringFunc(text, func(m string) string {
		id := reMention.FindStringSubmatch(m)[1]
		if id == self {
			return ""
		}
		return connectors.Mention(id)
	})
	return strings.TrimSpace(strings.Join(strings.Fields(unescape(text)), " "))
}

// click turns a block_actions payload into the bot's click event; false
// for other interactions. Its id (the click's trigger) drops redeliveries.
func (c *Connector) click(payload []byte) (connectors.Event, bool) {
	var cb slack.InteractionCallback
	if err := json.Unmarshal(payload, &cb); err != nil || cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		return connectors.Event{}, false
	}
	a := cb.ActionCallback.BlockActions[0]
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	msgTS := cb.Container.MessageTs
	if msgTS == "" {
		msgTS = cb.Message.Timestamp
	}
	thread := cb.Message.ThreadTimestamp
	if thread == "" {
		thread = cb.Container.ThreadTs
	}
	if thread == "" {
		thread = msgTS
	}
	id := cb.TriggerID
	if id == "" {
		id = a.ActionTs + "/" + cb.User.ID
	}
	user := cb.User.ID
	ev := connectors.Event{ID: "click:" + id, Kind: connectors.EventAction, Platform: Platform, Workspace: cb.Team.ID,
		Channel: channel, Thread: thread, User: connectors.User{ID: user}, ActionID: a.ActionID, Value: a.Value,
		Ref: connectors.Ref{Platform: Platform, Workspace: cb.Team.ID, Channel: channel, Thread: thread, ID: msgTS}}
	ev.Respond = func(ctx context.Context, text string) error { return c.respond(ctx, channel, thread, user, text) }
	return ev, true
}
