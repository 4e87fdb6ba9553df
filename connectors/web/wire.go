package web

import (
	"encoding/json"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// body is a connectors.Message as the API and the Archive show it.
type body struct {
	Text    string       `json:"text"`
	Fields  []wireField  `json:"fields,omitempty"`
	Context string       `json:"context,omitempty"`
	Buttons []wireButton `json:"buttons,omitempty"`
}

type wireField struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

type wireButton struct {
	ActionID string `json:"action_id"`
	Value    string `json:"value"`
	Label    string `json:"label"`
	Style    string `json:"style,omitempty"`
}

// messageView is one message in API responses and stream updates.
type messageView struct {
	ID      string `json:"id"`
	Channel string `json:"channel"`
	Thread  string `json:"thread"`
	User    string `json:"user"`
	Bot     bool   `json:"bot"`
	body
	Finished bool      `json:"finished"`
	Seq      uint64    `json:"seq"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// threadView is one thread in a channel's list.
type threadView struct {
	ID      string      `json:"id"`
	Channel string      `json:"channel"`
	Root    messageView `json:"root"`
	Replies int         `json:"replies"`
	Seq     uint64      `json:"seq"`
	Updated time.Time   `json:"updated"`
}

// channelView is one channel in the list.
type channelView struct {
	Name    string `json:"name"`
	Threads int    `json:"threads"`
	Seq     uint64 `json:"seq"`
}

// noticeView is a reply to one clicker only (Event.Respond).
type noticeView struct {
	Text    string `json:"text"`
	Message string `json:"message_id,omitempty"`
	Thread  string `json:"thread,omitempty"`
}

// toBody renders a neutral message for the page: a mention is @name (a
// web chat's user id is the name they chose).
func toBody(m connectors.Message) body {
	b := body{Text: connectors.PlainMentions(m.Text), Context: connectors.PlainMentions(m.Context)}
	for _, f := range m.Fields {
		b.Fields = append(b.Fields, wireField{Title: connectors.PlainMentions(f.Title), Value: connectors.PlainMentions(f.Value)})
	}
	for _, bt := range m.Buttons {
		b.Buttons = append(b.Buttons, wireButton{ActionID: bt.ActionID, Value: bt.Value, Label: bt.Label, Style: string(bt.Style)})
	}
	return b
}

// hasButton reports whether the message shows the button a click names.
func (b body) hasButton(actionID, value string) bool {
	for _, bt := range b.Buttons {
		if bt.ActionID == actionID && bt.Value == value {
			return true
		}
	}
	return false
}

// hasAction reports whether the message shows a button with actionID.
func (b body) hasAction(actionID string) bool {
	for _, bt := range b.Buttons {
		if bt.ActionID == actionID {
			return true
		}
	}
	return false
}

func (m *message) view() messageView {
	return messageView{ID: m.id, Channel: m.channel, Thread: m.thread, User: m.user, Bot: m.bot,
		body: m.body, Finished: m.finished, Seq: m.seq, Created: m.created, Updated: m.updated}
}

func (m *message) stored() StoredMessage {
	raw, _ := json.Marshal(m.body) // plain strings and slices: cannot fail
	return StoredMessage{ID: m.id, Channel: m.channel, Thread: m.thread, User: m.user, Bot: m.bot,
		Message: raw, Finished: m.finished, Seq: m.seq, Created: m.created, Updated: m.updated, Request: m.request}
}

func fromStored(s StoredMessage) (*message, error) {
	m := &message{id: s.ID, channel: s.Channel, thread: s.Thread, user: s.User, bot: s.Bot,
		finished: s.Finished, seq: s.Seq, created: s.Created, updated: s.Updated, request: s.Request}
	if err := json.Unmarshal(s.Message, &m.body); err != nil {
		return nil, err
	}
	return m, nil
}
