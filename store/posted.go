package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// PostedMessage is a platform message opsbot is streaming into. Recorded
// while streaming so that after a crash it can be finalized on start-up.
type PostedMessage struct {
	ID        int64
	Platform  string
	Channel   string
	Thread    string
	MessageID string
	SessionID int64
	Streaming bool
	Text      string // the text as last shown
	// Cards are the task cards the stream shows still open (RecordCards).
	Cards     []OpenCard
	UpdatedAt time.Time
}

// RecordStreaming records (or refreshes) a message being streamed.
func (s *Sessions) RecordStreaming(ctx context.Context, m PostedMessage) (PostedMessage, error) {
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		m.Streaming, m.UpdatedAt = true, time.UnixMilli(now).UTC()
		return tx.QueryRowContext(ctx, `INSERT INTO posted_messages (platform, channel, thread, message_id, session_id, state, text, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'streaming', ?, ?, ?)
			ON CONFLICT (platform, channel, message_id) DO UPDATE SET state = 'streaming', text = excluded.text, updated_at = excluded.updated_at
			RETURNING id`, m.Platform, m.Channel, m.Thread, m.MessageID, nullID(m.SessionID), m.Text, now, now).Scan(&m.ID)
	})
	return m, wrap("record streaming", err)
}

// pendingPrefix starts the placeholder id of a message recorded before
// its post returned.
const pendingPrefix = "pending-"

// PendingMessageID is a placeholder id, unique, for a message recorded
// before it is posted (the platform gives its id only in its answer).
func PendingMessageID() string { return pendingPrefix + newID() }

// Pending reports whether the message was recorded but its post never
// returned (a crash came first): its platform id is unknown.
func (m PostedMessage) Pending() bool { return strings.HasPrefix(m.MessageID, pendingPrefix) }

// PostedStreaming fills in the platform's id of a message recorded before
// its post, once the post returned.
func (s *Sessions) PostedStreaming(ctx context.Context, id int64, messageID, text string) error {
	return wrap("posted streaming", s.db.tx(ctx, func(tx *sql.Tx) error {
		return expectOne(tx.ExecContext(ctx, `UPDATE posted_messages SET message_id = ?, text = ?, updated_at = ? WHERE id = ?`,
			messageID, text, s.db.now(), id))
	}))
}

// UpdateStreamingText records the text last shown in a streamed message.
func (s *Sessions) UpdateStreamingText(ctx context.Context, id int64, text string) error {
	return wrap("update streaming text", s.db.tx(ctx, func(tx *sql.Tx) error {
		return expectOne(tx.ExecContext(ctx, `UPDATE posted_messages SET text = ?, updated_at = ? WHERE id = ?`, text, s.db.now(), id))
	}))
}

// FinishStreaming marks a message final: nothing to do for it after a crash.
func (s *Sessions) FinishStreaming(ctx context.Context, id int64) error {
	return wrap("finish streaming", s.db.tx(ctx, func(tx *sql.Tx) error {
		return expectOne(tx.ExecContext(ctx, `UPDATE posted_messages SET state = 'final', updated_at = ? WHERE id = ?`, s.db.now(), id))
	}))
}

// StreamingMessages lists messages left mid-stream, e.g. by a crash.
func (s *Sessions) StreamingMessages(ctx context.Context) ([]PostedMessage, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, platform, channel, thread, message_id, coalesce(session_id, 0), text, open_cards, updated_at
		FROM posted_messages WHERE state = 'streaming' ORDER BY id`)
	if err != nil {
		return nil, wrap("streaming messages", err)
	}
	defer rows.Close()
	var out []PostedMessage
	for rows.Next() {
		var m PostedMessage
		var updated sql.NullInt64
		var cards string
		if err := rows.Scan(&m.ID, &m.Platform, &m.Channel, &m.Thread, &m.MessageID, &m.SessionID, &m.Text, &cards, &updated); err != nil {
			return nil, wrap("streaming messages", err)
		}
		m.Cards = decodeCards(cards)
		m.Streaming, m.UpdatedAt = true, fromMS(updated)
		out = append(out, m)
	}
	return out, wrap("streaming messages", rows.Err())
}
