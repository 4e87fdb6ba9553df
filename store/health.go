package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// Unavailable is the error of a write the disk refused (full, read-only,
// failing) or of a read the database did not answer in time (locked by
// another program, a stalled disk). Its text says so in words, for people
// (the web API's 503, a thread's message); it unwraps to SQLite's error,
// if there was one. Check for it with
// errors.As; any interface with a StoreUnavailable method matches too,
// so a package that must not import store can tell it apart.
type Unavailable struct {
	// Reason is what is wrong, e.g. "the disk is full".
	Reason string
	path   string
	// state is what is wrong with the database, e.g. "is not answering";
	// "cannot be written" when empty.
	state string
	err   error
}

func (e *Unavailable) Error() string {
	state := e.state
	if state == "" {
		state = "cannot be written"
	}
	return fmt.Sprintf("the database %s %s: %s", e.path, state, e.Reason)
}

func (e *Unavailable) Unwrap() error { return e.err }

// StoreUnavailable returns the words of Error; see Unavailable.
func (e *Unavailable) StoreUnavailable() string { return e.Error() }

// writeFault remembers the last write the disk refused, until a write
// succeeds again; /readyz reads it through Health.
type writeFault struct {
	mu  sync.Mutex
	err *Unavailable
}

// diskFault turns an error of the disk into an *Unavailable, or returns
// nil for any other error (a constraint, a busy database, a cancel).
func diskFault(path string, err error) *Unavailable {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return nil
	}
	reason := ""
	switch se.Code {
	case sqlite3.ErrFull:
		reason = "the disk is full; free space on it, and opsbot resumes by itself"
	case sqlite3.ErrReadonly:
		reason = "it is read-only (the file, its folder or the filesystem); make it writable, and opsbot resumes by itself"
	case sqlite3.ErrIoErr:
		reason = "the disk reports an input/output error; check the disk"
	case sqlite3.ErrCantOpen:
		reason = "its file cannot be opened; check that it and its folder exist and can be written"
	case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
		reason = "the file is damaged; restore it from a backup"
	default:
		return nil
	}
	return &Unavailable{Reason: reason, path: path, err: err}
}

// noteWrite records how a write ended: a refusal of the disk is kept
// (and returned as an *Unavailable), a success clears it.
func (s *Store) noteWrite(err error) error {
	if err == nil {
		s.fault.mu.Lock()
		s.fault.err = nil
		s.fault.mu.Unlock()
		return nil
	}
	u := diskFault(s.path, err)
	if u == nil {
		return err
	}
	s.fault.mu.Lock()
	s.fault.err = u
	s.fault.mu.Unlock()
	return u
}

// Health reports whether the database answers and takes writes: a read
// must answer (within ctx), and after a write the disk refused, a small
// write must succeed again — so /readyz turns ready by itself once space
// returns, without waiting for someone to post.
func (s *Store) Health(ctx context.Context) error {
	if err := s.Ping(ctx); err != nil {
		if u := (*Unavailable)(nil); errors.As(err, &u) {
			return u // its words name the database
		}
		return fmt.Errorf("the database %s does not answer: %w", s.path, err)
	}
	s.fault.mu.Lock()
	failed := s.fault.err
	s.fault.mu.Unlock()
	if failed == nil {
		return nil
	}
	return s.probeWrite(ctx)
}

// probeWrite writes one small row, to learn whether writes work again.
func (s *Store) probeWrite(ctx context.Context) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES ('probe', ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, s.now())
		return err
	})
	return err
}
