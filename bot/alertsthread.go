package bot

import (
	"context"
	"errors"
	"sync"

	"github.com/opsbot/opsbot/connectors"
)

// An alert's investigation is its thread's turn: a thread runs one piece
// of work at a time, and two turns at once in one session would write its
// history over each other. So the investigation takes its place in the
// thread's queue (threads.hold) and runs when its turn comes, as a
// person's message does; a mention while it runs queues behind it and is
// told so, and a person's Stop (the `stop` message) stops it as it stops
// an answer.

// queuedBehindInvestigation answers a message that waits behind its
// thread's alert investigation.
const queuedBehindInvestigation = "queued behind the investigation: runs after it"

// ThreadHolder hands an alert's investigation its thread's turn (*Bot).
type ThreadHolder interface {
	// HoldThread waits for the turn of dest's thread and holds it until
	// release is called; stop is what a person's Stop (or a shutdown)
	// calls. It fails when ctx ends first or the bot is shutting down.
	HoldThread(ctx context.Context, dest connectors.Dest, stop context.CancelCauseFunc) (release func(), err error)
}

var _ ThreadHolder = (*Bot)(nil)

// errNotHeld is HoldThread's error while the bot shuts down.
var errNotHeld = errors.New("bot: shutting down, the thread takes no more work")

// HoldThread implements ThreadHolder.
func (b *Bot) HoldThread(ctx context.Context, dest connectors.Dest, stop context.CancelCauseFunc) (func(), error) {
	return b.threads.hold(ctx, threadID{dest.Platform, dest.Channel, dest.Thread}, stop)
}

// holding is a thread's turn handed to work outside the bot. The thread's
// worker offers it on turn and then waits for done; the holder closes
// gone when it stops waiting first, and the worker closes dropped when
// the bot shuts down before its turn comes.
type holding struct {
	stop          context.CancelCauseFunc
	turn          chan struct{}
	done          chan struct{}
	gone, dropped chan struct{}
}

// serve hands the thread's turn to the holder and waits until it is
// done with it (or gave up waiting).
func (h *holding) serve() {
	select {
	case h.turn <- struct{}{}:
		<-h.done
	case <-h.gone:
	}
}

// dropHolds tells the holders still queued that their turn will not come.
func dropHolds(queue []queued) {
	for _, q := range queue {
		if q.hold != nil {
			close(q.hold.dropped)
		}
	}
}

// hold queues a holding on thread id and waits for its turn: see
// ThreadHolder. It is never turned away by the bot's queue limits (the
// investigation has its own, alerts.max_concurrent).
func (ts *threads) hold(ctx context.Context, id threadID, stop context.CancelCauseFunc) (func(), error) {
	h := &holding{stop: stop, turn: make(chan struct{}), done: make(chan struct{}), gone: make(chan struct{}), dropped: make(chan struct{})}
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		return nil, errNotHeld
	}
	t := ts.byID[id]
	if t == nil {
		t = &thread{id: id}
		ts.byID[id] = t
	}
	t.queue = append(t.queue, queued{hold: h})
	if !t.running {
		t.running = true
		ts.crew.do(func() { ts.work(t) })
	}
	ts.mu.Unlock()
	select {
	case <-h.turn:
		return sync.OnceFunc(func() { close(h.done) }), nil
	case <-h.dropped:
		return nil, errNotHeld
	case <-ctx.Done():
		close(h.gone)
		return nil, context.Cause(ctx)
	}
}

// noteFor is the answer to a message queued on thread id: behind its
// investigation, or behind its current answer.
func (ts *threads) noteFor(id threadID) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.byID[id]; t != nil && t.held {
		return queuedBehindInvestigation
	}
	return queuedNote
}
