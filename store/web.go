package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// WebMessage is the latest state of one message of the web chat.
type WebMessage struct {
	ID       string
	Channel  string
	Thread   string
	User     string
	Bot      bool
	Message  json.RawMessage
	Finished bool
	Seq      uint64
	Created  time.Time
	Updated  time.Time
}

// SaveWebMessage stores a message's latest state (an upsert by id); an
// older state (lower seq) never replaces a newer one.
func (s *Store) SaveWebMessage(ctx context.Context, m WebMessage) error {
	return wrap("save web message", s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO web_messages (id, channel, thread, user, bot, message, finished, seq, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET message = excluded.message, finished = excluded.finished, seq = excluded.seq,
				updated_at = excluded.updated_at WHERE excluded.seq >= web_messages.seq`,
			m.ID, m.Channel, m.Thread, m.User, m.Bot, string(m.Message), m.Finished, int64(m.Seq), m.Created.UnixMilli(), m.Updated.UnixMilli())
		return err
	}))
}

// WebMessages returns every web chat message, oldest first.
func (s *Store) WebMessages(ctx context.Context) ([]WebMessage, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, channel, thread, user, bot, message, finished, seq, created_at, updated_at
		FROM web_messages ORDER BY created_at, id`)
	if err != nil {
		return nil, wrap("web messages", err)
	}
	defer rows.Close()
	var out []WebMessage
	for rows.Next() {
		var m WebMessage
		var msg string
		var seq int64
		var created, updated sql.NullInt64
		if err := rows.Scan(&m.ID, &m.Channel, &m.Thread, &m.User, &m.Bot, &msg, &m.Finished, &seq, &created, &updated); err != nil {
			return nil, wrap("web messages", err)
		}
		m.Message, m.Seq, m.Created, m.Updated = json.RawMessage(msg), uint64(seq), fromMS(created), fromMS(updated)
		out = append(out, m)
	}
	return out, wrap("web messages", rows.Err())
}
