package bot

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// redactedConn is a connector behind the bot's one redactor: every message
// the bot posts, edits, streams or stops streaming passes it, so no path
// to a platform (answers, cards, replies, job reports, what ran) can skip
// it. It also fits each message to the platform's Limits (MaxButtons).
// AddConnector puts every connector behind one.
type redactedConn struct {
	connectors.Connector
	red *redact.Redactor
	// fence refuses every request while it is closed (Platforms.Fence).
	fence *postFence
}

var (
	_ connectors.Streamer = (*redactedConn)(nil)
	_ render.Redacting    = (*redactedConn)(nil)
)

// errNoStreaming is StartStream's error for a connector that has no native
// streaming (its Limits claimed it has).
var errNoStreaming = errors.New("bot: this connector has no native streaming")

// Post redacts m and posts it, unless the fence is closed.
func (c *redactedConn) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	if c.fence.err() != nil {
		return fenced(c.fence)
	}
	if err := c.fence.beforeButtons(ctx, m); err != nil {
		return connectors.Ref{}, err
	}
	return c.Connector.Post(ctx, d, c.message(m))
}

// Edit redacts m and edits the message, unless the fence is closed.
func (c *redactedConn) Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	if err := c.fence.err(); err != nil {
		return err
	}
	if err := c.fence.beforeButtons(ctx, m); err != nil {
		return err
	}
	return c.Connector.Edit(ctx, ref, c.message(m))
}

// StartStream redacts m and starts a native stream.
func (c *redactedConn) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	if c.fence.err() != nil {
		return fenced(c.fence)
	}
	st, ok := c.Connector.(connectors.Streamer)
	if !ok {
		return connectors.Ref{}, errNoStreaming
	}
	return st.StartStream(ctx, d, c.message(m))
}

// AppendStream redacts text and appends it. The Renderer appends only
// what it already redacted as a whole, holding back an unfinished word,
// so a secret split across appends is caught there; this is the backstop.
func (c *redactedConn) AppendStream(ctx context.Context, ref connectors.Ref, text string) error {
	if err := c.fence.err(); err != nil {
		return err
	}
	st, ok := c.Connector.(connectors.Streamer)
	if !ok {
		return errNoStreaming
	}
	return st.AppendStream(ctx, ref, c.red.String(text))
}

// StopStream redacts the final form and stops the stream.
func (c *redactedConn) StopStream(ctx context.Context, ref connectors.Ref, final connectors.Message) error {
	if err := c.fence.err(); err != nil {
		return err
	}
	st, ok := c.Connector.(connectors.Streamer)
	if !ok {
		return errNoStreaming
	}
	return st.StopStream(ctx, ref, c.message(final))
}

// Thinking passes a thinking status on to a connector that shows one.
func (c *redactedConn) Thinking(ctx context.Context, d connectors.Dest, status string) error {
	if err := c.fence.err(); err != nil {
		return err
	}
	if th, ok := c.Connector.(connectors.Thinker); ok {
		return th.Thinking(ctx, d, c.red.String(status))
	}
	return nil
}

// message redacts everything of m a person reads, and fits m to the
// platform. Button values are ids the bot reads back, not text, and stay.
func (c *redactedConn) message(m connectors.Message) connectors.Message {
	m = fit(m, c.Connector.Limits())
	m.Text, m.Context = c.red.String(m.Text), c.red.String(m.Context)
	m.Tasks = c.redactTasks(m.Tasks)
	if len(m.Fields) > 0 {
		fields := make([]connectors.Field, len(m.Fields))
		for i, f := range m.Fields {
			fields[i] = connectors.Field{Title: c.red.String(f.Title), Value: c.red.String(f.Value)}
		}
		m.Fields = fields
	}
	if len(m.Buttons) > 0 {
		buttons := append([]connectors.Button(nil), m.Buttons...)
		for i := range buttons {
			buttons[i].Label = c.red.String(buttons[i].Label)
		}
		m.Buttons = buttons
	}
	return m
}

// Redactor is the redactor the connector sits behind: the Renderer
// redacts what it shows of an answer as a whole through it
// (render.Redacting).
func (c *redactedConn) Redactor() *redact.Redactor { return c.red }

// RedactedHistory is an agent.History whose every message passes the
// redactor before it is stored: what the model reads back (the person's
// words, its own answers, tool results) and what compaction archives.
type RedactedHistory struct {
	agent.History
	Redactor *redact.Redactor
}

// Append redacts msgs and appends them.
func (h RedactedHistory) Append(ctx context.Context, sessionID int64, msgs ...agent.Message) (int64, error) {
	return h.History.Append(ctx, sessionID, h.messages(msgs)...)
}

// Compact redacts msgs and makes them the whole history.
func (h RedactedHistory) Compact(ctx context.Context, sessionID int64, msgs ...agent.Message) (int64, error) {
	return h.History.Compact(ctx, sessionID, h.messages(msgs)...)
}

func (h RedactedHistory) messages(msgs []agent.Message) []agent.Message {
	out := make([]agent.Message, len(msgs))
	for i, m := range msgs {
		blocks := make([]agent.Block, len(m.Content))
		for j, b := range m.Content {
			b.Text, b.Content = h.Redactor.String(b.Text), h.Redactor.String(b.Content)
			b.Input = redactJSON(h.Redactor, b.Input)
			blocks[j] = b
		}
		out[i] = agent.Message{Role: m.Role, Content: blocks}
	}
	return out
}

// redactJSON redacts the strings inside a JSON value: redacting its
// encoded text would miss a secret whose quotes are escaped.
func redactJSON(r *redact.Redactor, raw json.RawMessage) json.RawMessage {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return raw
	}
	changed := false
	v = redactValue(r, v, &changed)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

func redactValue(r *redact.Redactor, v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		red := r.String(x)
		*changed = *changed || red != x
		return red
	case []any:
		for i := range x {
			x[i] = redactValue(r, x[i], changed)
		}
	case map[string]any:
		for k := range x {
			x[k] = redactValue(r, x[k], changed)
		}
	}
	return v
}
