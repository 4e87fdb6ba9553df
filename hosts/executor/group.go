package executor

import (
	"context"
	"sync"
)

// group commits concurrent calls together (group commit): the first
// caller commits its item; those that arrive meanwhile queue, and the
// first of them then commits the whole queue in one call. Every caller
// returns only once its own item is committed, with its own result. A
// fan-out's workers each record their host's command as it starts and as
// it ends; one commit (one fsync) a row made them queue behind one
// another's fsyncs (issue 28).
type group[T, R any] struct {
	commit func(ctx context.Context, items []T) ([]R, error)
	mu     sync.Mutex
	queued []*groupCall[T, R]
	busy   bool // a caller is committing; the next takes its turn from it
}

// groupCall is one call waiting for its item's commit. turn carries one
// message at a time: the outcome, or the turn to commit the queue.
type groupCall[T, R any] struct {
	item T
	turn chan groupTurn[R]
}

type groupTurn[R any] struct {
	lead   bool
	result R
	err    error
}

// do commits item, with whatever else is queued, and returns its result.
func (g *group[T, R]) do(ctx context.Context, item T) (R, error) {
	c := &groupCall[T, R]{item: item, turn: make(chan groupTurn[R], 1)}
	g.mu.Lock()
	g.queued = append(g.queued, c)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		g.commitQueued(ctx)
	}
	for {
		t := <-c.turn
		if !t.lead {
			return t.result, t.err
		}
		g.commitQueued(ctx)
	}
}

// commitQueued commits the queue in one call, tells each caller its
// outcome, and hands the next turn to the first caller queued meanwhile.
// The committing caller's cancellation does not reach the others' items.
func (g *group[T, R]) commitQueued(ctx context.Context) {
	g.mu.Lock()
	batch := g.queued
	g.queued = nil
	g.mu.Unlock()
	items := make([]T, len(batch))
	for i, c := range batch {
		items[i] = c.item
	}
	results, err := g.commit(context.WithoutCancel(ctx), items)
	for i, c := range batch {
		var r R
		if i < len(results) { // a store may say what it did despite err
			r = results[i]
		}
		c.turn <- groupTurn[R]{result: r, err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queued) == 0 {
		g.busy = false
		return
	}
	g.queued[0].turn <- groupTurn[R]{lead: true}
}
