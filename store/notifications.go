package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Notification reports the end of a job: posted into the job's thread
// (delivered) and shown to the agent before its next model call (injected).
type Notification struct {
	ID          int64
	JobID       int64
	SessionID   int64
	Text        string
	CreatedAt   time.Time
	DeliveredAt time.Time
	InjectedAt  time.Time
}

const notificationCols = `id, coalesce(job_id, 0), coalesce(session_id, 0), text, created_at, delivered_at, injected_at`

// UndeliveredNotifications lists notifications not yet posted, oldest
// first. Given platforms, it lists only those without a thread and those
// whose thread is on one of them: a process that serves the terminal
// must not take the web chat's or Slack's, and notes of a platform no
// longer configured must not hold back the others.
func (s *Inbox) UndeliveredNotifications(ctx context.Context, limit int, platforms ...string) ([]Notification, error) {
	where, args := `WHERE delivered_at IS NULL`, []any{}
	if len(platforms) > 0 {
		where += ` AND (session_id IS NULL OR session_id IN (SELECT id FROM sessions WHERE platform IN (?` + strings.Repeat(`, ?`, len(platforms)-1) + `)))`
		for _, p := range platforms {
			args = append(args, p)
		}
	}
	n, err := s.notifications(ctx, where+` ORDER BY id LIMIT ?`, append(args, limit)...)
	return n, wrap("undelivered notifications", err)
}

// UninjectedNotifications lists a session's notifications the agent has
// not seen yet, oldest first.
func (s *Inbox) UninjectedNotifications(ctx context.Context, sessionID int64) ([]Notification, error) {
	n, err := s.notifications(ctx, `WHERE session_id = ? AND injected_at IS NULL ORDER BY id`, sessionID)
	return n, wrap("uninjected notifications", err)
}

// MarkDelivered records that notifications were posted; it reports how
// many had not been marked before.
func (s *Inbox) MarkDelivered(ctx context.Context, ids ...int64) (int64, error) {
	n, err := s.markNotifications(ctx, "delivered_at", ids)
	return n, wrap("mark delivered", err)
}

// MarkInjected records that the agent was shown notifications.
func (s *Inbox) MarkInjected(ctx context.Context, ids ...int64) (int64, error) {
	n, err := s.markNotifications(ctx, "injected_at", ids)
	return n, wrap("mark injected", err)
}

func (s *Inbox) markNotifications(ctx context.Context, column string, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int64
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		args := []any{s.db.now()}
		for _, id := range ids {
			args = append(args, id)
		}
		marks := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
		// column is one of two constants above, never input.
		res, err := tx.ExecContext(ctx, `UPDATE notifications SET `+column+` = ? WHERE `+column+` IS NULL AND id IN (`+marks+`)`, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

func (s *Inbox) notifications(ctx context.Context, where string, args ...any) ([]Notification, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+notificationCols+` FROM notifications `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Notification
	for rows.Next() {
		var n Notification
		var created, delivered, injected sql.NullInt64
		if err := rows.Scan(&n.ID, &n.JobID, &n.SessionID, &n.Text, &created, &delivered, &injected); err != nil {
			return nil, err
		}
		n.CreatedAt, n.DeliveredAt, n.InjectedAt = fromMS(created), fromMS(delivered), fromMS(injected)
		out = append(out, n)
	}
	return out, rows.Err()
}
