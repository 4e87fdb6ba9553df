package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Sessions is the sessions aggregate: a thread's session, its messages,
// turns and compacted transcripts, and the answers streamed into it.
type Sessions struct{ db *Store }

// ThreadKey names a conversation: one thread of one channel on one platform.
type ThreadKey struct {
	Platform  string
	Workspace string
	Channel   string
	Thread    string
}

// Session is the state kept for one thread.
type Session struct {
	ID int64
	ThreadKey
	Cwd       string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const sessionCols = `id, platform, workspace, channel, thread, cwd, created_at, updated_at`

// SessionFor returns the session of a thread, creating it on first use.
// created reports whether this call made it.
func (s *Sessions) SessionFor(ctx context.Context, key ThreadKey) (sess Session, created bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO sessions (platform, workspace, channel, thread, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (platform, channel, thread) DO NOTHING`,
			key.Platform, key.Workspace, key.Channel, key.Thread, now, now)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		created = n == 1
		sess, err = scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions
			WHERE platform = ? AND channel = ? AND thread = ?`, key.Platform, key.Channel, key.Thread))
		return err
	})
	return sess, created, wrap("session for thread", err)
}

// HasSession reports whether the thread has a session, without making
// one.
func (s *Sessions) HasSession(ctx context.Context, key ThreadKey) (bool, error) {
	var n int
	err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM sessions
		WHERE platform = ? AND channel = ? AND thread = ?`, key.Platform, key.Channel, key.Thread).Scan(&n)
	return n > 0, wrap("has session", err)
}

// Session returns the session with the given id.
func (s *Sessions) Session(ctx context.Context, id int64) (Session, error) {
	sess, err := scanSession(s.db.read.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	return sess, wrap("session", err)
}

// SetSessionCwd records the session's working directory.
func (s *Sessions) SetSessionCwd(ctx context.Context, id int64, cwd string) error {
	return wrap("set session cwd", s.db.tx(ctx, func(tx *sql.Tx) error {
		return expectOne(tx.ExecContext(ctx, `UPDATE sessions SET cwd = ?, updated_at = ? WHERE id = ?`, cwd, s.db.now(), id))
	}))
}

// CountSessions is the number of sessions kept.
func (s *Sessions) CountSessions(ctx context.Context) (int, error) {
	var n int
	err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n)
	return n, wrap("count sessions", err)
}

type scanner interface{ Scan(...any) error }

func scanSession(row scanner) (Session, error) {
	var s Session
	var created, updated sql.NullInt64
	err := row.Scan(&s.ID, &s.Platform, &s.Workspace, &s.Channel, &s.Thread, &s.Cwd, &created, &updated)
	s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
	return s, err
}

// expectOne turns "no row changed" into ErrNotFound.
func expectOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// wrap prefixes an error with the operation; sql.ErrNoRows becomes
// ErrNotFound so that callers need not import database/sql.
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		err = ErrNotFound
	}
	return &opError{op: op, err: err}
}

type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return "store: " + e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }
