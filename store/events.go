package store

import (
	"context"
	"database/sql"
	"time"
)

// SeenEvent records a platform event id and reports whether it is new:
// platforms retry deliveries, and a retried event must not act twice.
func (s *Inbox) SeenEvent(ctx context.Context, platform, eventID string) (first bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO events_seen (platform, event_id, seen_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, platform, eventID, s.db.now())
		if err == nil {
			n, _ := res.RowsAffected()
			first = n == 1
		}
		return err
	})
	return first, wrap("seen event", err)
}

// ForgetEventsBefore drops event ids older than t, and the inbox events
// handed to their work before t; retries come within minutes, so a day's
// worth is plenty. It returns how many event ids it dropped.
func (s *Inbox) ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM events_seen WHERE seen_at <= ?`, t.UnixMilli())
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM inbox WHERE done_at <= ?`, t.UnixMilli())
		return err
	})
	return n, wrap("forget events", err)
}
