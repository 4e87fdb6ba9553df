package agent

import (
	"context"
	"sync"
	"time"
)

// budget is a turn's own time: it runs while the agent works and stops
// while a person is asked to approve a command, so that an approval card's
// expiry, not the turn's timeout, decides how long people have. When the
// time is used up, expire runs once.
type budget struct {
	mu      sync.Mutex
	left    time.Duration
	since   time.Time   // when the clock last started; zero while paused
	timer   *time.Timer // nil while paused
	paused  int         // approvals waiting (a subagent may wait on its own)
	expire  func()
	expired bool
}

func newBudget(d time.Duration, expire func()) *budget {
	b := &budget{left: d, expire: expire}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.start()
	return b
}

// start runs the clock; b.mu is held.
func (b *budget) start() {
	b.since = time.Now()
	b.timer = time.AfterFunc(b.left, b.fire)
}

func (b *budget) fire() {
	b.mu.Lock()
	if b.expired || b.timer == nil {
		b.mu.Unlock()
		return
	}
	b.expired = true
	b.mu.Unlock()
	b.expire()
}

// pause stops the clock until the returned resume is called.
func (b *budget) pause() (resume func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused++
	if b.paused == 1 && b.timer != nil && !b.expired {
		b.timer.Stop()
		b.timer = nil
		b.left -= time.Since(b.since)
	}
	var once sync.Once
	return func() { once.Do(b.resume) }
}

func (b *budget) resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused--
	if b.paused == 0 && !b.expired {
		b.start()
	}
}

// stop ends the clock for good: the turn is over.
func (b *budget) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expired = true
	if b.timer != nil {
		b.timer.Stop()
	}
}

type budgetKey struct{}

// withBudget makes b the budget of the turn that runs in ctx.
func withBudget(ctx context.Context, b *budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// WaitingForPeople stops the turn's clock, if ctx belongs to a turn, until
// the returned func is called: a tool calls it while people decide on an
// approval, so that the card's expiry, not the turn's timeout, decides
// how long they have.
func WaitingForPeople(ctx context.Context) (done func()) {
	if b, ok := ctx.Value(budgetKey{}).(*budget); ok {
		return b.pause()
	}
	return func() {}
}
