package store

import (
	"context"
	"database/sql"
	"time"
)

// Feedback is one click of a feedback button: what a person (UserID)
// said (Value "good" or "bad") of the answer of turn TurnID: the turns
// table's id, of a person's question or of an alert's investigation
// (whose summary takes feedback like an answer).
type Feedback struct {
	Platform, TurnID, UserID, Value string
}

// FeedbackDay counts a UTC day's feedback clicks.
type FeedbackDay struct {
	Day       string // YYYY-MM-DD
	Good, Bad int64
}

// RecordFeedback keeps a feedback click, at the store's clock. A person
// has one say on a turn: a later click replaces theirs (good then bad is
// bad), and a repeat of it changes nothing. changed reports whether the
// click said something new.
func (s *Store) RecordFeedback(ctx context.Context, f Feedback) (changed bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		// DO UPDATE … WHERE leaves a repeat untouched: no row changes,
		// and its time stays that of the click it repeats.
		res, err := tx.ExecContext(ctx, `INSERT INTO feedback (platform, turn_id, user_id, value, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (platform, turn_id, user_id) DO UPDATE SET value = excluded.value, at = excluded.at
			WHERE feedback.value != excluded.value`,
			f.Platform, f.TurnID, f.UserID, f.Value, s.Now().Unix())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		changed = n > 0
		return err
	})
	return changed, wrap("record feedback", err)
}

// FeedbackByDay counts the feedback (each person's last say on each
// turn, on the day they said it) per UTC day since since,
// oldest day first.
func (s *Store) FeedbackByDay(ctx context.Context, since time.Time) ([]FeedbackDay, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT date(at, 'unixepoch') AS day,
			SUM(value = 'good'), SUM(value = 'bad') FROM feedback WHERE at >= ? GROUP BY day ORDER BY day`, since.Unix())
	if err != nil {
		return nil, wrap("feedback by day", err)
	}
	defer rows.Close()
	var days []FeedbackDay
	for rows.Next() {
		var d FeedbackDay
		if err := rows.Scan(&d.Day, &d.Good, &d.Bad); err != nil {
			return nil, wrap("feedback by day", err)
		}
		days = append(days, d)
	}
	return days, wrap("feedback by day", rows.Err())
}
