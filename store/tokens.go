package store

import (
	"context"
	"database/sql"
	"errors"
)

// TokenUsage counts model tokens: Input every prompt token, Cached the
// part of Input read from the provider's prompt cache, Output the
// model's.
type TokenUsage struct {
	Input, Cached, Output int64
}

// Total is every token, cached or not.
func (u TokenUsage) Total() int64 { return u.Input + u.Output }

// tokenDay is today's key in token_usage: the UTC date of the store's
// clock.
func (s *Sessions) tokenDay() string {
	return s.db.Now().UTC().Format("2006-01-02")
}

// AddTokens adds u to the session's count of today (UTC) and returns
// the day's count after it.
func (s *Sessions) AddTokens(ctx context.Context, sessionID int64, u TokenUsage) (TokenUsage, error) {
	var day TokenUsage
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO token_usage (session_id, day, input, cached, output) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (session_id, day) DO UPDATE SET input = input + excluded.input,
				cached = cached + excluded.cached, output = output + excluded.output
			RETURNING input, cached, output`, sessionID, s.tokenDay(), u.Input, u.Cached, u.Output).Scan(&day.Input, &day.Cached, &day.Output)
	})
	return day, wrap("add tokens", err)
}

// TokensToday is the session's count of today (UTC); zero when it spent
// none.
func (s *Sessions) TokensToday(ctx context.Context, sessionID int64) (TokenUsage, error) {
	var day TokenUsage
	err := s.db.read.QueryRowContext(ctx, `SELECT input, cached, output FROM token_usage WHERE session_id = ? AND day = ?`,
		sessionID, s.tokenDay()).Scan(&day.Input, &day.Cached, &day.Output)
	if errors.Is(err, sql.ErrNoRows) {
		return TokenUsage{}, nil
	}
	return day, wrap("tokens today", err)
}
