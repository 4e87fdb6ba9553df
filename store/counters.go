package store

import (
	"context"
	"database/sql"
	"errors"
)

// webSeqCounter names the web chat's sequence number in counters.
const webSeqCounter = "web_seq"

// ReserveSeq records that the web chat may hand out sequence numbers
// up to upTo: after a restart it starts above them, so an id or seq a
// client has seen is never reused, whatever was lost or deleted. The
// counter never goes down.
func (s *Web) ReserveSeq(ctx context.Context, upTo uint64) error {
	return wrap("reserve web seq", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`, webSeqCounter, int64(upTo))
		return err
	}))
}

// ReservedSeq is the highest sequence number the web chat reserved (0: none).
func (s *Web) ReservedSeq(ctx context.Context) (uint64, error) {
	var v int64
	err := s.db.read.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = ?`, webSeqCounter).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return uint64(v), wrap("web seq", err)
}
