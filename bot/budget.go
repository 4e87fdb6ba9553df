package bot

import (
	"context"
	"sync"
	"time"
)

// EditBudget shares one workspace's edit allowance among all the messages
// being streamed there (Slack's chat.update is ~50/min per workspace). It
// is a token bucket; and the interval each stream waits between its edits
// stretches with the number of streams, so that together they stay inside
// the budget instead of racing for it.
type EditBudget struct {
	perMinute int
	burst     float64

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	streams int
}

// NewEditBudget allows perMinute edits a minute; 0 means no shared limit.
// It keeps a margin: the bucket refills at 90% of perMinute with a burst of
// 2, so that no 60-second window — which is how platforms count — ever
// holds more than perMinute edits.
func NewEditBudget(perMinute int) *EditBudget {
	b := &EditBudget{perMinute: perMinute * 9 / 10, burst: 2}
	if perMinute > 0 {
		b.perMinute = max(1, b.perMinute)
	}
	b.tokens = b.burst
	return b
}

// Join registers a stream; leave unregisters it.
func (b *EditBudget) Join() (leave func()) {
	b.mu.Lock()
	b.streams++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.streams--
			b.mu.Unlock()
		})
	}
}

// Interval is how long one stream should wait between its edits, at least
// min: with n streams sharing perMinute edits, each gets n×60s/perMinute.
func (b *EditBudget) Interval(min time.Duration) time.Duration {
	if b == nil || b.perMinute <= 0 {
		return min
	}
	b.mu.Lock()
	n := max(b.streams, 1)
	b.mu.Unlock()
	fair := time.Duration(n) * time.Minute / time.Duration(b.perMinute)
	return max(min, fair)
}

// Wait takes one edit from the budget, waiting for it if needed.
func (b *EditBudget) Wait(ctx context.Context) error {
	if b == nil || b.perMinute <= 0 {
		return nil
	}
	for {
		wait := b.take()
		if wait == 0 {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// take returns 0 when a token was taken, or how long until one exists.
func (b *EditBudget) take() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	rate := float64(b.perMinute) / float64(time.Minute) // tokens per ns
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+float64(now.Sub(b.last))*rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1-b.tokens)/rate) + time.Millisecond
}

// Penalize empties the bucket after the platform said to slow down, so no
// stream edits again before the platform's retry-after passed.
func (b *EditBudget) Penalize(retryAfter time.Duration) {
	if b == nil || b.perMinute <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	rate := float64(b.perMinute) / float64(time.Minute)
	b.tokens = -float64(retryAfter) * rate
	b.last = time.Now()
}
