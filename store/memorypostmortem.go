package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// SavePostmortem keeps md as the postmortem last posted in a thread,
// replacing the one before: what a download of it serves.
func (m *Memory) SavePostmortem(ctx context.Context, sessionID int64, md string) error {
	err := m.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO postmortems (session_id, markdown, created_at) VALUES (?, ?, ?)
			ON CONFLICT (session_id) DO UPDATE SET markdown = excluded.markdown, created_at = excluded.created_at`,
			sessionID, md, m.db.now())
		return err
	})
	return wrap("save postmortem", err)
}

// LastPostmortem is the postmortem last posted in a thread and when;
// found false when none was.
func (m *Memory) LastPostmortem(ctx context.Context, sessionID int64) (md string, at time.Time, found bool, err error) {
	var ms sql.NullInt64
	err = m.db.read.QueryRowContext(ctx, `SELECT markdown, created_at FROM postmortems WHERE session_id = ?`, sessionID).Scan(&md, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, wrap("last postmortem", err)
	}
	return md, fromMS(ms), true, nil
}
