package bot

import (
	"context"
	"fmt"
	"sync"
)

// turnSlots bounds how many threads run work at once (bot.max_turns).
// Threads that wait are served first come, first served, and a thread
// that finished one piece of work waits at the back of the line for its
// next one: a thread with a deep queue cannot starve the others.
type turnSlots struct {
	mu      sync.Mutex
	free    int
	waiters []chan struct{} // in arrival order; closed when given a slot
	// moved, when set, is called (with mu held: it must not block) each
	// time the line moves: the queued notices then say so.
	moved func()
}

func newTurnSlots(n int) *turnSlots { return &turnSlots{free: n} }

// join takes a free slot (it returns nil) or a place at the back of the
// line, which wait then waits on.
func (s *turnSlots) join() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free > 0 && len(s.waiters) == 0 {
		s.free--
		return nil
	}
	place := make(chan struct{})
	s.waiters = append(s.waiters, place)
	return place
}

// wait waits until place is given a slot, or for ctx to end (then it
// holds none and has left the line).
func (s *turnSlots) wait(ctx context.Context, place chan struct{}) error {
	select {
	case <-place:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, w := range s.waiters {
		if w == place {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			s.movedLocked()
			return ctx.Err()
		}
	}
	// Given a slot as ctx ended: hand it on.
	s.releaseLocked()
	return ctx.Err()
}

// ahead is how many wait in line before place; -1 once it left the line.
func (s *turnSlots) ahead(place chan struct{}) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, w := range s.waiters {
		if w == place {
			return i
		}
	}
	return -1
}

// release gives the slot to the longest waiter, or frees it.
func (s *turnSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *turnSlots) releaseLocked() {
	if len(s.waiters) == 0 {
		s.free++
		return
	}
	close(s.waiters[0])
	s.waiters = s.waiters[1:]
	s.movedLocked()
}

func (s *turnSlots) movedLocked() {
	if s.moved != nil {
		s.moved()
	}
}

// waitingLocked counts the threads whose worker waits for a turn slot
// (started, not yet holding one); ts.mu is held.
func (ts *threads) waitingLocked() int {
	n := 0
	for _, t := range ts.byID {
		if t.running && !t.slot {
			n++
		}
	}
	return n
}

// Queues is what waits in the bot, for /metrics.
type Queues struct {
	// Running is how many threads run work now (at most bot.max_turns).
	Running int
	// Waiting is how many threads wait for one of those slots.
	Waiting int
	// Queued is how many messages wait behind their thread's running
	// work, over every thread; Deepest is the longest such queue.
	Queued, Deepest int
}

// queues reports the depth of the queues now.
func (ts *threads) queues() Queues {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var q Queues
	for _, t := range ts.byID {
		q.Queued += len(t.queue)
		q.Deepest = max(q.Deepest, len(t.queue))
		switch {
		case t.slot:
			q.Running++
		case t.running:
			q.Waiting++
		}
	}
	return q
}

// full is Bot.Full.
func (ts *threads) full(id threadID) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.fullLocked(id)
}

// fullLocked is full; ts.mu is held.
func (ts *threads) fullLocked(id threadID) string {
	cfg := ts.cfg
	if t := ts.byID[id]; t != nil {
		if len(t.queue) >= cfg.MaxQueue {
			return fmt.Sprintf("this thread is busy: %d messages already wait for the current answer; send it again once that one is done", len(t.queue))
		}
		return ""
	}
	if ts.waitingLocked() >= cfg.MaxWaiting {
		return fmt.Sprintf("opsbot is busy: %d conversations already wait for their turn; send it again in a minute", cfg.MaxWaiting)
	}
	return ""
}
