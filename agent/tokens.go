package agent

import (
	"context"
	"fmt"
	"sync"
)

// TokenBudget bounds the tokens the model may spend, as the providers
// count them (prompt tokens, those read from the cache included, and
// output tokens). 0 is no limit.
type TokenBudget struct {
	// Turn bounds one turn, its subagents included.
	Turn int `yaml:"turn"`
	// ThreadDay bounds one thread (session) in one UTC day; it needs
	// Agent.Tokens.
	ThreadDay int `yaml:"thread_day"`
	// Alert bounds one turn of an alert investigation (SessionInfo.Kind
	// KindAlert) in place of Turn; 0 leaves Turn's bound.
	Alert int `yaml:"alert"`
}

// SessionKind says what a session is for; the zero kind is a
// conversation with people.
type SessionKind string

// KindAlert is a session that investigates an alert: its turns are
// bounded by TokenBudget.Alert.
const KindAlert SessionKind = "alert"

// TokenLedger keeps each thread's token count per UTC day, so that
// TokenBudget.ThreadDay holds across turns and restarts.
type TokenLedger interface {
	// AddTokens adds u to the session's count of today and returns the
	// day's total (Usage.Total) after it.
	AddTokens(ctx context.Context, sessionID int64, u Usage) (dayTotal int, err error)
	// TokensToday is the session's total of today.
	TokensToday(ctx context.Context, sessionID int64) (int, error)
}

// BudgetScope says which token budget a turn reached.
type BudgetScope string

// The token budgets.
const (
	BudgetTurn      BudgetScope = "turn"
	BudgetThreadDay BudgetScope = "thread_day"
	BudgetAlert     BudgetScope = "alert"
)

// BudgetError ends a turn that reached a token budget: Limit tokens of
// Scope. The turn still answers (a last call, with no tools, asks for a
// summary) unless the budget was spent before it began.
type BudgetError struct {
	Scope BudgetScope
	Limit int
	// Used is what the turn, or the thread today, had spent.
	Used int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("agent: the %s token budget of %d is reached (%d used)", e.Scope, e.Limit, e.Used)
}

// budgetStep is the note of the call a turn makes when its tokens are
// spent.
const budgetStep = "[opsbot note, not the person's words] This turn has used its token budget and no more tools can run. " +
	"Answer now, briefly: summarize what you found, quoting the evidence, and what is left to check."

// tokenCount is what a turn and its subagents spent: one count, shared
// through the context, so that a subagent's tokens count against its
// parent's budget.
type tokenCount struct {
	mu   sync.Mutex
	turn int
	day  int // the thread's total today, as the ledger last said
}

type tokenKey struct{}

// withTokenCount gives the turn that runs in ctx a token count, unless
// ctx belongs to a turn already (a subagent shares its parent's); day is
// the thread's total today so far.
func withTokenCount(ctx context.Context, day func() int) (context.Context, *tokenCount) {
	if c, ok := ctx.Value(tokenKey{}).(*tokenCount); ok {
		return ctx, c
	}
	c := &tokenCount{day: day()}
	return context.WithValue(ctx, tokenKey{}, c), c
}

// add counts u, and the ledger's day total when it gave one (0: none).
func (c *tokenCount) add(u Usage, day int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turn += u.Total()
	if day > 0 {
		c.day = day
	} else {
		c.day += u.Total()
	}
}

func (c *tokenCount) read() (turn, day int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turn, c.day
}

// count adds a model call's usage to the turn, its shared count and the
// thread's ledger. The ledger is written even when the turn was just
// stopped: the tokens were spent.
func (a *Agent) count(ctx context.Context, t *turn, u Usage) {
	t.usage = t.usage.add(u)
	if t.tokens == nil || u.Total() == 0 {
		return
	}
	day := 0
	if a.Tokens != nil && t.sess.ID != 0 {
		// A ledger that cannot write does not fail the answer: the day's
		// count then goes on in memory for this turn.
		day, _ = a.Tokens.AddTokens(context.WithoutCancel(ctx), t.sess.ID, u)
	}
	t.tokens.add(u, day)
}

// today is the thread's total of today, when a day budget needs it.
func (a *Agent) today(ctx context.Context, sess SessionInfo) int {
	if a.Tokens == nil || a.Budget.ThreadDay <= 0 || sess.ID == 0 {
		return 0
	}
	n, _ := a.Tokens.TokensToday(ctx, sess.ID) // unknown counts as none spent
	return n
}

// spent returns the budget t has reached, or nil.
func (a *Agent) spent(t *turn) *BudgetError {
	if t.tokens == nil {
		return nil
	}
	turn, day := t.tokens.read()
	scope, limit := BudgetTurn, a.Budget.Turn
	if t.sess.Kind == KindAlert && a.Budget.Alert > 0 {
		scope, limit = BudgetAlert, a.Budget.Alert
	}
	if limit > 0 && turn >= limit {
		return &BudgetError{Scope: scope, Limit: limit, Used: turn}
	}
	if d := a.Budget.ThreadDay; d > 0 && day >= d {
		return &BudgetError{Scope: BudgetThreadDay, Limit: d, Used: day}
	}
	return nil
}

// outOfTokens ends a turn that reached a budget: the calls it asked for
// do not run, and, if it spent anything, a last call with no tools asks
// for what it found.
func (a *Agent) outOfTokens(parent context.Context, t *turn, err *BudgetError) error {
	a.settle(context.WithoutCancel(parent), t, "not run: the turn reached its token budget")
	if t.usage.Total() > 0 {
		a.lastWords(parent, t, budgetStep)
	}
	return a.fail(t.emit, err)
}
