package store

import (
	"context"
	"database/sql"
	"sync"
)

// AuditBatch appends entries in one transaction: one commit, one fsync,
// for all of them. A fan-out records all its hosts' starts this way
// before it dials the first; At defaults to now.
func (s *Audit) AuditBatch(ctx context.Context, entries []AuditEntry) error {
	now := s.db.now()
	return wrap("audit", s.db.tx(ctx, func(tx *sql.Tx) error {
		for _, e := range entries {
			at := now
			if !e.At.IsZero() {
				at = e.At.UnixMilli()
			}
			if err := appendAuditRaw(ctx, tx, at, e.Actor, e.Action, e.Subject, e.Detail); err != nil {
				return err
			}
		}
		return nil
	}))
}

// auditGroup commits concurrent Audit calls together (group commit): a
// fan-out's workers each record their host's start and end, and with
// synchronous=FULL each commit is an fsync on the one writer, which made
// sixty-four workers queue behind one another's fsyncs (issue 28). The
// first caller commits its entry; those that arrive meanwhile queue, and
// the first of them then commits the whole queue in one transaction. Every
// caller still returns only once its own entry is on disk: a command is
// on record before it runs.
type auditGroup struct {
	mu     sync.Mutex
	queued []*auditWaiter
	busy   bool // a caller is committing; the next takes its turn from it
}

// auditWaiter is one Audit call waiting for its entry's commit.
type auditWaiter struct {
	entry AuditEntry
	// turn carries one message at a time: the commit's outcome, or the
	// turn to commit the queue (then the outcome follows).
	turn chan auditTurn
}

type auditTurn struct {
	lead bool
	err  error
}

// join queues w; true when no commit is under way and w's caller is to
// commit now.
func (g *auditGroup) join(w *auditWaiter) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queued = append(g.queued, w)
	if g.busy {
		return false
	}
	g.busy = true
	return true
}

// take empties the queue for a commit.
func (g *auditGroup) take() []*auditWaiter {
	g.mu.Lock()
	defer g.mu.Unlock()
	batch := g.queued
	g.queued = nil
	return batch
}

// handOff gives the next commit to the first caller that queued during
// this one, or ends the group's turn.
func (g *auditGroup) handOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queued) == 0 {
		g.busy = false
		return
	}
	g.queued[0].turn <- auditTurn{lead: true}
}

// commitQueued commits every entry queued so far in one transaction and
// tells each caller the outcome. The caller's cancellation does not reach
// the others' entries.
func (s *Audit) commitQueued(ctx context.Context) {
	batch := s.group.take()
	entries := make([]AuditEntry, len(batch))
	for i, w := range batch {
		entries[i] = w.entry
	}
	err := s.AuditBatch(context.WithoutCancel(ctx), entries)
	for _, w := range batch {
		w.turn <- auditTurn{err: err}
	}
	s.group.handOff()
}
