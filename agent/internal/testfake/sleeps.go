package testfake

import (
	"context"
	"sync"
	"time"
)

// Sleeps records the waits asked of an injected sleep; its Sleep method
// returns at once, so retry tests run without waiting.
type Sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns ctx's error without waiting.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// All returns the waits recorded so far, in order.
func (s *Sleeps) All() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
