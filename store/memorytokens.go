package store

import "context"

// AddTokens counts a model call made for a thread outside its turns (a
// `summarize` or a `postmortem`) in the thread's tokens of today, which
// `opsbot stats` and the token budgets read.
func (m *Memory) AddTokens(ctx context.Context, sessionID int64, u TokenUsage) error {
	_, err := m.db.Sessions().AddTokens(ctx, sessionID, u)
	return err
}
