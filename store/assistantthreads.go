package store

import (
	"context"
	"database/sql"
	"errors"
)

// AssistantThreads are one platform's assistant threads (Slack's Agents &
// AI Apps pane): started ones, and whether their first question titled
// them yet. The connector keeps them here so that a restart between a
// thread's start and its first question still titles it.
type AssistantThreads struct {
	s        *Store
	platform string
}

// AssistantThreads are platform's assistant threads.
func (s *Store) AssistantThreads(platform string) *AssistantThreads {
	return &AssistantThreads{s: s, platform: platform}
}

// Started records that a person started the assistant thread; a thread
// started twice (Slack retried the event) keeps its first row.
func (a *AssistantThreads) Started(ctx context.Context, channel, thread string) error {
	err := a.s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO assistant_threads (platform, channel, thread, started_at)
			VALUES (?, ?, ?, ?)`, a.platform, channel, thread, a.s.Now().Unix())
		return err
	})
	return wrap("assistant thread started", err)
}

// FirstQuestion reports whether the thread is an assistant thread not yet
// titled, and marks it titled: it is true once per thread.
func (a *AssistantThreads) FirstQuestion(ctx context.Context, channel, thread string) (bool, error) {
	var first bool
	err := a.s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE assistant_threads SET titled = 1
			WHERE platform = ? AND channel = ? AND thread = ? AND titled = 0`, a.platform, channel, thread)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		first = n == 1
		return err
	})
	return first, wrap("assistant thread first question", err)
}

// Known reports whether the thread is an assistant thread.
func (a *AssistantThreads) Known(ctx context.Context, channel, thread string) (bool, error) {
	var one int
	err := a.s.read.QueryRowContext(ctx, `SELECT 1 FROM assistant_threads
		WHERE platform = ? AND channel = ? AND thread = ?`, a.platform, channel, thread).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrap("assistant thread known", err)
}
