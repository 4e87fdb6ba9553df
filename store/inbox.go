package store

import (
	"context"
	"database/sql"
	"time"
)

// Inbox is the inbox aggregate: inbound events recorded before they are
// handled, the seen event ids that drop duplicates, and the
// notifications to deliver to threads and inject into turns.
type Inbox struct{ db *Store }

// InboxEvent is an event on record in the inbox and not yet handed to its
// work.
type InboxEvent struct {
	ID       int64
	Platform string
	// Event is the neutral event as the bot wrote it (JSON).
	Event      []byte
	ReceivedAt time.Time
	// QueuedNotice is the message that told its thread it waited for a
	// turn slot (KeepQueuedNotice), nil when none was posted.
	QueuedNotice []byte
}

// RecordEvent writes an event to the inbox before its platform is
// acknowledged. An event with a platform id is recorded once: a retry of
// one already recorded returns first false and writes nothing (the id is
// kept in events_seen, in the same transaction).
func (s *Inbox) RecordEvent(ctx context.Context, platform, eventID string, event []byte) (id int64, first bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		if eventID != "" {
			res, err := tx.ExecContext(ctx, `INSERT INTO events_seen (platform, event_id, seen_at) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, platform, eventID, now)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil // a retry
			}
		}
		first = true
		return tx.QueryRowContext(ctx, `INSERT INTO inbox (platform, event_id, event, received_at) VALUES (?, ?, ?, ?) RETURNING id`,
			platform, eventID, string(event), now).Scan(&id)
	})
	if err != nil {
		return 0, false, wrap("record event", err)
	}
	return id, first, nil
}

// FinishEvent records that an inbox event was handed to its work: a
// start-up does not route it again.
func (s *Inbox) FinishEvent(ctx context.Context, id int64) error {
	return wrap("finish event", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE inbox SET done_at = ? WHERE id = ? AND done_at IS NULL`, s.db.now(), id)
		return err
	}))
}

// OpenEvents lists the inbox events not yet handed to their work, in the
// order they came: at start-up, what a crash or a stop left.
func (s *Inbox) OpenEvents(ctx context.Context) ([]InboxEvent, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, platform, event, received_at, queued_notice FROM inbox WHERE done_at IS NULL ORDER BY id`)
	if err != nil {
		return nil, wrap("open events", err)
	}
	defer rows.Close()
	var out []InboxEvent
	for rows.Next() {
		var e InboxEvent
		var ev string
		var at sql.NullInt64
		var notice sql.NullString
		if err := rows.Scan(&e.ID, &e.Platform, &ev, &at, &notice); err != nil {
			return nil, wrap("open events", err)
		}
		e.Event, e.ReceivedAt = []byte(ev), fromMS(at)
		if notice.Valid {
			e.QueuedNotice = []byte(notice.String)
		}
		out = append(out, e)
	}
	return out, wrap("open events", rows.Err())
}

// DeliverNotification records that a notification was posted and, when
// turn is not nil, puts the agent turn it asks for (an event, as
// RecordEvent's) into the inbox and marks the notification injected (the
// turn's message carries the news), in one transaction: the turn is on
// record exactly when the notice is marked posted, so a crash after it
// is finished by the next start and a crash before it posts the notice
// again. It returns the turn's inbox id, 0 when there is none or the
// notification was marked posted before.
func (s *Inbox) DeliverNotification(ctx context.Context, id int64, platform string, turn []byte) (eventID int64, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		res, err := tx.ExecContext(ctx, `UPDATE notifications SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL`, now, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 || turn == nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notifications SET injected_at = ? WHERE id = ? AND injected_at IS NULL`, now, id); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO inbox (platform, event, received_at) VALUES (?, ?, ?) RETURNING id`,
			platform, string(turn), now).Scan(&eventID)
	})
	return eventID, wrap("deliver notification", err)
}

// Unsettled counts what is on record and not yet acted on: inbox events
// not handed to their work, and decided approvals whose follow-up is not
// done. 0 means a restart has acted on everything it found.
func (s *Inbox) Unsettled(ctx context.Context) (int, error) {
	var n int
	err := s.db.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM inbox WHERE done_at IS NULL)
		+ (SELECT count(*) FROM approval_followups f JOIN approvals a ON a.id = f.approval_id
		   WHERE f.done_at IS NULL AND a.state != 'pending')`).Scan(&n)
	return n, wrap("unsettled", err)
}
