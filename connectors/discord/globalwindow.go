package discord

import (
	"context"
	"sync"
	"time"
)

// globalMax is how many calls the connector lets into any one second of
// Discord's global window (50): a margin for clocks that do not tick
// quite alike.
const globalMax = 45

// globalWindow keeps Discord's global limit whatever the network does to
// the calls on the way. Discord counts a call when it arrives, somewhere
// between the moment it was sent and the moment its answer came back;
// pacing departures alone (the rate limiter) is not enough when a loaded
// machine or a network holds calls and lets them through together. So a
// call counts from when it is sent until a second after its answer: a
// new call goes only while fewer than max are counted, and then no
// second of Discord's can have seen more than max arrive.
type globalWindow struct {
	max int
	per time.Duration

	mu      sync.Mutex
	flying  int
	ended   []time.Time   // when the answers of the last per came back, oldest first
	changed chan struct{} // closed and replaced when a call ends
}

func newGlobalWindow(max int, per time.Duration) *globalWindow {
	return &globalWindow{max: max, per: per, changed: make(chan struct{})}
}

// acquire waits until a call may go, and counts it as flying; the caller
// calls done when its answer (or its error) comes back.
func (w *globalWindow) acquire(ctx context.Context) error {
	for {
		w.mu.Lock()
		now := time.Now()
		w.forgetLocked(now)
		if w.flying+len(w.ended) < w.max {
			w.flying++
			w.mu.Unlock()
			return nil
		}
		changed, wait := w.changed, w.per
		if len(w.ended) > 0 {
			wait = w.ended[0].Add(w.per).Sub(now)
		}
		w.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// done ends a flying call: it counts for one more second.
func (w *globalWindow) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flying--
	w.ended = append(w.ended, time.Now())
	close(w.changed)
	w.changed = make(chan struct{})
}

// forgetLocked drops the answers older than the window.
func (w *globalWindow) forgetLocked(now time.Time) {
	i := 0
	for i < len(w.ended) && now.Sub(w.ended[i]) >= w.per {
		i++
	}
	w.ended = w.ended[i:]
}
