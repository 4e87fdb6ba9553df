package slackfake

import (
	"fmt"
	"strings"
)

// Posted is a person's message the fake delivered, with its event ids.
type Posted struct {
	TS, Thread string
	// EventID is the app_mention's (or the message's) event id;
	// Envelopes are the envelopes sent for it.
	EventID   string
	Envelopes []string
	// Payloads are what was sent, for a redelivery.
	Payloads []any
}

// personMessage stores a person's message in channel and returns it.
func (s *Server) personMessage(channel, user, thread, text string) *Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{TS: s.nextTS(), Thread: thread, Channel: channel, User: user, Text: text}
	s.channels[channel] = append(s.channels[channel], m)
	s.bump()
	return m
}

func (s *Server) eventID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("Ev%08d", s.seq)
}

// callback is an Events API event_callback around inner.
func (s *Server) callback(inner map[string]any) map[string]any {
	return map[string]any{"token": "verification-token-unused", "team_id": Team, "api_app_id": "A0FAKE", "type": "event_callback",
		"event_id": s.eventID(), "event_time": 1700000000, "event": inner,
		"authorizations": []any{map[string]any{"team_id": Team, "user_id": BotUser, "is_bot": true}}}
}

// Mention has user write text in channel mentioning the bot (thread ""
// starts a thread): Slack sends an app_mention and the message's copy.
func (s *Server) Mention(channel, user, thread, text string) Posted {
	text = "<@" + BotUser + "> " + text
	m := s.personMessage(channel, user, thread, text)
	inner := map[string]any{"type": "app_mention", "user": user, "text": text, "ts": m.TS, "channel": channel, "event_ts": m.TS, "team": Team}
	copyOf := map[string]any{"type": "message", "user": user, "text": text, "ts": m.TS, "channel": channel, "event_ts": m.TS,
		"channel_type": "channel", "team": Team}
	if thread != "" {
		inner["thread_ts"], copyOf["thread_ts"] = thread, thread
	}
	p := Posted{TS: m.TS, Thread: thread}
	if p.Thread == "" {
		p.Thread = m.TS
	}
	a, b := s.callback(inner), s.callback(copyOf)
	p.EventID = a["event_id"].(string)
	p.Payloads = []any{a, b}
	p.Envelopes = []string{s.Send("events_api", a, 0), s.Send("events_api", b, 0)}
	return p
}

// Reply has user write text in a thread without mentioning the bot
// (mentions of others may be in text as <@U…>).
func (s *Server) Reply(channel, user, thread, text string) Posted {
	m := s.personMessage(channel, user, thread, text)
	inner := map[string]any{"type": "message", "user": user, "text": text, "ts": m.TS, "thread_ts": thread, "channel": channel,
		"event_ts": m.TS, "channel_type": channelType(channel), "team": Team}
	cb := s.callback(inner)
	return Posted{TS: m.TS, Thread: thread, EventID: cb["event_id"].(string), Payloads: []any{cb}, Envelopes: []string{s.Send("events_api", cb, 0)}}
}

// DirectMessage has user write text to the bot in direct message channel.
func (s *Server) DirectMessage(channel, user, text string) Posted {
	m := s.personMessage(channel, user, "", text)
	inner := map[string]any{"type": "message", "user": user, "text": text, "ts": m.TS, "channel": channel,
		"event_ts": m.TS, "channel_type": "im", "team": Team}
	cb := s.callback(inner)
	return Posted{TS: m.TS, Thread: m.TS, EventID: cb["event_id"].(string), Payloads: []any{cb}, Envelopes: []string{s.Send("events_api", cb, 0)}}
}

func channelType(ch string) string {
	switch {
	case strings.HasPrefix(ch, "D"):
		return "im"
	case strings.HasPrefix(ch, "G"):
		return "group"
	}
	return "channel"
}

// ClickPayload is the block_actions payload of user clicking the button
// with actionID on message ts of channel; false when it has no such
// button. The payload carries the button's block_id, as Slack's does.
func (s *Server) ClickPayload(channel, ts, user, actionID string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(channel, ts)
	if m == nil {
		return nil, false
	}
	for _, b := range m.Blocks {
		for _, e := range b.Elements {
			if b.Type != "actions" || e.ActionID != actionID {
				continue
			}
			blockID := b.BlockID
			if blockID == "" {
				blockID = "auto" + m.TS // Slack gives every block an id
			}
			s.seq++
			action := map[string]any{"type": "button", "action_id": e.ActionID, "block_id": blockID, "value": e.Value,
				"text": map[string]any{"type": "plain_text", "text": e.Text}, "action_ts": fmt.Sprintf("1700000000.%06d", s.seq)}
			return s.blockActions(m, channel, user, action), true
		}
	}
	return nil, false
}

// blockActions is the block_actions payload of user's click of action
// on m; s.mu is held.
func (s *Server) blockActions(m *Message, channel, user string, action map[string]any) map[string]any {
	msg := map[string]any{"type": "message", "ts": m.TS, "user": m.User, "text": m.Text}
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": channel, "is_ephemeral": false}
	if m.Thread != "" {
		msg["thread_ts"], container["thread_ts"] = m.Thread, m.Thread
	}
	return map[string]any{"type": "block_actions", "team": map[string]any{"id": Team, "domain": "fake"},
		"user":       map[string]any{"id": user, "username": s.users[user], "name": s.users[user], "team_id": Team},
		"api_app_id": "A0FAKE", "token": "verification-token-unused", "container": container,
		"trigger_id": fmt.Sprintf("trig-%d", s.seq), "channel": map[string]any{"id": channel, "name": channel},
		"message": msg, "actions": []any{action}}
}

// Click delivers user's click on the button actionID of message ts over
// Socket Mode; it returns the envelope id, or "" when there is no such
// button.
func (s *Server) Click(channel, ts, user, actionID string) string {
	p, ok := s.ClickPayload(channel, ts, user, actionID)
	if !ok {
		return ""
	}
	return s.Send("interactive", p, 0)
}

// ClickFeedback delivers user's click on the feedback button of message
// ts whose value is value, over Socket Mode, as Slack sends a click of a
// feedback_buttons element of a context_actions block; it returns the
// envelope id, or "" when the message has no such button.
func (s *Server) ClickFeedback(channel, ts, user, value string) string {
	s.mu.Lock()
	m := s.find(channel, ts)
	var action map[string]any
	for _, b := range blocksOf(m) {
		for _, e := range b.Elements {
			for _, fb := range []*FeedbackButton{e.Positive, e.Negative} {
				if b.Type == "context_actions" && e.Type == "feedback_buttons" && fb != nil && fb.Value == value {
					s.seq++
					action = map[string]any{"type": "feedback_buttons", "action_id": e.ActionID, "block_id": b.BlockID,
						"value": value, "action_ts": fmt.Sprintf("1700000000.%06d", s.seq)}
				}
			}
		}
	}
	var p map[string]any
	if action != nil {
		p = s.blockActions(m, channel, user, action)
	}
	s.mu.Unlock()
	if p == nil {
		return ""
	}
	return s.Send("interactive", p, 0)
}

// blocksOf is m's blocks, none for no message.
func blocksOf(m *Message) []Block {
	if m == nil {
		return nil
	}
	return m.Blocks
}
