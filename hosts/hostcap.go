package hosts

import (
	"context"
	"fmt"
	"sync"
)

// hostCap bounds how many commands run at once on each host
// (exec.max_per_host), whatever asks for them: chat runs, the agent, jobs
// and checks share it, so a burst of work cannot pile onto one machine.
// More wait, in no particular order, until one ends or their context
// does.
type hostCap struct {
	limit int
	mu    sync.Mutex
	slots map[string]chan struct{} // by host name; len is the number running
}

func newHostCap(limit int) *hostCap {
	return &hostCap{limit: limit, slots: map[string]chan struct{}{}}
}

func (c *hostCap) of(host string) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.slots[host]
	if s == nil {
		s = make(chan struct{}, c.limit)
		c.slots[host] = s
	}
	return s
}

// acquire waits for a slot on host; release gives it back.
func (c *hostCap) acquire(ctx context.Context, host string) (release func(), err error) {
	s := c.of(host)
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	default:
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, capError{fmt.Sprintf("not run: %d commands already run on %s (exec.max_per_host) and none ended in time", c.limit, host), ctx.Err()}
	}
}

// capError says in words why a command did not run; it unwraps to the
// context's error.
type capError struct {
	msg string
	err error
}

func (e capError) Error() string { return e.msg }
func (e capError) Unwrap() error { return e.err }

// Running maps each host that runs commands now to how many.
func (c *hostCap) running() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for h, s := range c.slots {
		if n := len(s); n > 0 {
			out[h] = n
		}
	}
	return out
}

// Running maps each host that runs commands now to how many run there
// (at most exec.max_per_host), for /metrics.
func (f *Fleet) Running() map[string]int { return f.cap.running() }
