package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Message is one entry of a session's history. Content holds the content
// blocks as JSON, in whatever shape the agent keeps them.
type Message struct {
	Seq       int64
	Role      string
	Content   json.RawMessage
	Tokens    int
	CreatedAt time.Time
}

// AppendMessages adds messages at the end of a session's history, in one
// transaction, and returns them with their sequence numbers.
func (s *Sessions) AppendMessages(ctx context.Context, sessionID int64, msgs ...Message) ([]Message, error) {
	var out []Message
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		last, err := lastSeq(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		now := s.db.now()
		if out, err = insertMessages(ctx, tx, sessionID, last, now, msgs); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, now, sessionID)
		return err
	})
	return out, wrap("append messages", err)
}

// insertMessages writes msgs after sequence number last.
func insertMessages(ctx context.Context, tx *sql.Tx, sessionID, last, now int64, msgs []Message) ([]Message, error) {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		if !json.Valid(m.Content) {
			return nil, fmt.Errorf("message %d: content is not valid JSON", i)
		}
		m.Seq, m.CreatedAt = last+int64(i)+1, time.UnixMilli(now).UTC()
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, tokens, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, sessionID, m.Seq, m.Role, string(m.Content), m.Tokens, now); err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// Messages returns a session's history in order.
func (s *Sessions) Messages(ctx context.Context, sessionID int64) ([]Message, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT seq, role, content, tokens, created_at FROM messages
		WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, wrap("messages", err)
	}
	msgs, err := scanMessages(rows)
	return msgs, wrap("messages", err)
}

// scanMessages reads and closes rows of (seq, role, content, tokens, created_at).
func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var content string
		var created sql.NullInt64
		if err := rows.Scan(&m.Seq, &m.Role, &content, &m.Tokens, &created); err != nil {
			return nil, err
		}
		m.Content, m.CreatedAt = json.RawMessage(content), fromMS(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

// LastSeq is the sequence number of a session's last message, 0 if none.
func (s *Sessions) LastSeq(ctx context.Context, sessionID int64) (int64, error) {
	var seq int64
	err := s.db.read.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?`, sessionID).Scan(&seq)
	return seq, wrap("last seq", err)
}

// DeleteMessagesAfter removes every message with a sequence number above
// seq: the rollback of a cancelled turn. It returns how many went.
func (s *Sessions) DeleteMessagesAfter(ctx context.Context, sessionID, seq int64) (int64, error) {
	var n int64
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND seq > ?`, sessionID, seq)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, wrap("delete messages", err)
}

func lastSeq(ctx context.Context, tx *sql.Tx, sessionID int64) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?`, sessionID).Scan(&seq)
	return seq, err
}

// TurnStatus is the state of an agent turn.
type TurnStatus string

// The turn states.
const (
	TurnRunning     TurnStatus = "running"
	TurnDone        TurnStatus = "done"
	TurnCancelled   TurnStatus = "cancelled"
	TurnFailed      TurnStatus = "failed"
	TurnInterrupted TurnStatus = "interrupted"
)

// Turn is one agent turn of a session.
type Turn struct {
	ID        int64
	SessionID int64
	// StartSeq is the last message before the turn: rolling back deletes
	// everything after it.
	StartSeq  int64
	Status    TurnStatus
	StartedAt time.Time
	EndedAt   time.Time
}

// BeginTurn records a running turn that starts after the session's current
// last message.
func (s *Sessions) BeginTurn(ctx context.Context, sessionID int64) (Turn, error) {
	t := Turn{SessionID: sessionID, Status: TurnRunning}
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if t.StartSeq, err = lastSeq(ctx, tx, sessionID); err != nil {
			return err
		}
		now := s.db.now()
		t.StartedAt = time.UnixMilli(now).UTC()
		res, err := tx.ExecContext(ctx, `INSERT INTO turns (session_id, start_seq, status, started_at) VALUES (?, ?, 'running', ?)`,
			sessionID, t.StartSeq, now)
		if err == nil {
			t.ID, err = res.LastInsertId()
		}
		return err
	})
	return t, wrap("begin turn", err)
}

// EndTurn moves a running turn to its final status; it reports whether the
// turn was still running.
func (s *Sessions) EndTurn(ctx context.Context, id int64, status TurnStatus) (bool, error) {
	var won bool
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE turns SET status = ?, ended_at = ? WHERE id = ? AND status = 'running'`,
			string(status), s.db.now(), id)
		if err == nil {
			n, _ := res.RowsAffected()
			won = n == 1
		}
		return err
	})
	return won, wrap("end turn", err)
}

// RunningTurns lists turns left running, e.g. by a crash.
func (s *Sessions) RunningTurns(ctx context.Context) ([]Turn, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, session_id, start_seq, status, started_at, ended_at FROM turns
		WHERE status = 'running' ORDER BY id`)
	if err != nil {
		return nil, wrap("running turns", err)
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		var t Turn
		var started, ended sql.NullInt64
		if err := rows.Scan(&t.ID, &t.SessionID, &t.StartSeq, &t.Status, &started, &ended); err != nil {
			return nil, wrap("running turns", err)
		}
		t.StartedAt, t.EndedAt = fromMS(started), fromMS(ended)
		out = append(out, t)
	}
	return out, wrap("running turns", rows.Err())
}

// LastTurn is the session's latest turn; ErrNotFound when it has none.
func (s *Sessions) LastTurn(ctx context.Context, sessionID int64) (Turn, error) {
	var t Turn
	var started, ended sql.NullInt64
	err := s.db.read.QueryRowContext(ctx, `SELECT id, session_id, start_seq, status, started_at, ended_at FROM turns
		WHERE session_id = ? ORDER BY id DESC LIMIT 1`, sessionID).Scan(&t.ID, &t.SessionID, &t.StartSeq, &t.Status, &started, &ended)
	t.StartedAt, t.EndedAt = fromMS(started), fromMS(ended)
	return t, wrap("last turn", err)
}
