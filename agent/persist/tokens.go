package persist

import (
	"context"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// Tokens keeps each thread's daily token count in the SQLite store, for
// agent.TokenBudget.ThreadDay.
type Tokens struct{ Store *store.Store }

var _ agent.TokenLedger = Tokens{}

// AddTokens adds a call's usage to the session's day.
func (l Tokens) AddTokens(ctx context.Context, sessionID int64, u agent.Usage) (int, error) {
	day, err := l.Store.Sessions().AddTokens(ctx, sessionID,
		store.TokenUsage{Input: int64(u.InputTokens), Cached: int64(u.CachedTokens), Output: int64(u.OutputTokens)})
	return int(day.Total()), err
}

// TokensToday is the session's total of today.
func (l Tokens) TokensToday(ctx context.Context, sessionID int64) (int, error) {
	day, err := l.Store.Sessions().TokensToday(ctx, sessionID)
	return int(day.Total()), err
}
