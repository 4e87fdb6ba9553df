package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// Transcript is a session's history as it was before a compaction.
type Transcript struct {
	ID         int64
	SessionID  int64
	ArchivedAt time.Time
	Messages   []Message
}

// CompactMessages archives a session's whole history as a transcript and
// replaces it with msgs, in one transaction. The new messages continue the
// sequence numbers, so a seq taken before compaction never names a new one.
func (s *Sessions) CompactMessages(ctx context.Context, sessionID int64, msgs ...Message) ([]Message, error) {
	var out []Message
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, role, content, tokens, created_at FROM messages WHERE session_id = ? ORDER BY seq`, sessionID)
		if err != nil {
			return err
		}
		old, err := scanMessages(rows)
		if err != nil {
			return err
		}
		archive, _ := json.Marshal(old)
		now := s.db.now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO transcripts (session_id, archived_at, messages) VALUES (?, ?, ?)`, sessionID, now, string(archive)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ?`, sessionID); err != nil {
			return err
		}
		last := int64(0)
		if len(old) > 0 {
			last = old[len(old)-1].Seq
		}
		out, err = insertMessages(ctx, tx, sessionID, last, now, msgs)
		return err
	})
	return out, wrap("compact messages", err)
}

// Transcripts lists a session's archived transcripts, oldest first.
func (s *Sessions) Transcripts(ctx context.Context, sessionID int64) ([]Transcript, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, archived_at, messages FROM transcripts WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, wrap("transcripts", err)
	}
	defer rows.Close()
	var out []Transcript
	for rows.Next() {
		t := Transcript{SessionID: sessionID}
		var at sql.NullInt64
		var raw string
		if err := rows.Scan(&t.ID, &at, &raw); err != nil {
			return nil, wrap("transcripts", err)
		}
		t.ArchivedAt = fromMS(at)
		if err := json.Unmarshal([]byte(raw), &t.Messages); err != nil {
			return nil, wrap("transcripts", err)
		}
		out = append(out, t)
	}
	return out, wrap("transcripts", rows.Err())
}
