package store

import (
	"context"
	"database/sql"
)

// KeepQueuedNotice records, on inbox event id, the platform message that
// tells its thread it waits for a turn slot (ref: the neutral Ref, JSON),
// so that the next start can edit it after a crash. It is kept only while
// the event is open: a notice of work already begun is the turn's.
func (s *Inbox) KeepQueuedNotice(ctx context.Context, id int64, ref []byte) error {
	return wrap("keep queued notice", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE inbox SET queued_notice = ? WHERE id = ? AND done_at IS NULL`, string(ref), id)
		return err
	}))
}
