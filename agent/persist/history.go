package persist

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// History keeps history in the SQLite store.
type History struct{ Store *store.Store }

var _ agent.History = History{}

// Load reads the history.
func (h History) Load(ctx context.Context, sessionID int64) ([]agent.Message, int64, error) {
	rows, err := h.Store.Sessions().Messages(ctx, sessionID)
	if err != nil {
		return nil, 0, err
	}
	msgs := make([]agent.Message, 0, len(rows))
	var last int64
	for _, r := range rows {
		m := agent.Message{Role: agent.Role(r.Role)}
		if err := json.Unmarshal(r.Content, &m.Content); err != nil {
			return nil, 0, fmt.Errorf("agent: message %d of session %d: %w", r.Seq, sessionID, err)
		}
		msgs, last = append(msgs, m), r.Seq
	}
	return msgs, last, nil
}

// Append persists messages.
func (h History) Append(ctx context.Context, sessionID int64, msgs ...agent.Message) (int64, error) {
	rows, err := toRows(msgs)
	if err != nil {
		return 0, err
	}
	out, err := h.Store.Sessions().AppendMessages(ctx, sessionID, rows...)
	if err != nil || len(out) == 0 {
		return 0, err
	}
	return out[len(out)-1].Seq, nil
}

// Rollback deletes what came after toSeq.
func (h History) Rollback(ctx context.Context, sessionID, toSeq int64) error {
	_, err := h.Store.Sessions().DeleteMessagesAfter(ctx, sessionID, toSeq)
	return err
}

// Compact archives the transcript and replaces the history.
func (h History) Compact(ctx context.Context, sessionID int64, msgs ...agent.Message) (int64, error) {
	rows, err := toRows(msgs)
	if err != nil {
		return 0, err
	}
	out, err := h.Store.Sessions().CompactMessages(ctx, sessionID, rows...)
	if err != nil || len(out) == 0 {
		return 0, err
	}
	return out[len(out)-1].Seq, nil
}

func toRows(msgs []agent.Message) ([]store.Message, error) {
	rows := make([]store.Message, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m.Content)
		if err != nil {
			return nil, fmt.Errorf("agent: encode message: %w", err)
		}
		rows[i] = store.Message{Role: string(m.Role), Content: b, Tokens: agent.EstimateTokens(m)}
	}
	return rows, nil
}
