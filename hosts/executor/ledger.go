package executor

import (
	"context"
	"errors"
	"log/slog"

	"github.com/opsbot/opsbot/hosts"
)

// Running is a command recorded while it runs: its process, and the
// opsbot process that runs it (a sweep leaves the commands of a live
// opsbot alone).
type Running struct {
	hosts.Process
	Owner hosts.Process
}

// LedgerStore keeps the record of the commands running; cmd/opsbot adapts
// the store to it. AddRunning marks the approval the run claimed
// (Process.Approval) used in the same transaction.
type LedgerStore interface {
	AddRunning(ctx context.Context, r Running) (int64, error)
	RemoveRunning(ctx context.Context, id int64) error
}

// BatchLedgerStore is a LedgerStore that also records and forgets many
// commands in one commit each: the ledger then group-commits its
// concurrent calls (a fan-out's hosts).
type BatchLedgerStore interface {
	LedgerStore
	AddRunningBatch(ctx context.Context, rs []Running) ([]int64, error)
	RemoveRunningBatch(ctx context.Context, ids []int64) error
}

// ProcessLedger records every command that runs, while it runs, in the
// store: it is the hosts.Tracker of `opsbot run`, and what the bot's
// start-up sweep reads after a crash.
//
// An approval is claimed (consumed) for its one run before the command
// starts; its follow-up stays open until the command has started, and is
// closed in the same transaction that records the running command
// (Started). So after a crash, a consumed approval whose follow-up is
// still open is one whose command never started: the next start says so
// in its thread ("approved by @bob, but opsbot stopped before running
// it") — it is never silently lost, and never run twice. The approval
// travels with the run, never beside it: the Guard's Permit names it
// (hosts.Confinement.Approval), the executors pass it to the Tracker
// (hosts.Process.Approval), and Settled closes, once the run has
// returned, what the ledger did not (a command that never started).
type ProcessLedger struct {
	log   *slog.Logger
	owner hosts.Process
	// add and remove commit concurrent calls together when the store
	// can (BatchLedgerStore); each call still returns once its own row
	// is on disk, so a command is on record before it starts.
	add    *group[Running, int64]
	remove *group[int64, struct{}]
	// replicator is the store's, when it replicates (BeforeStart).
	replicator Replicator
}

var (
	_ hosts.Tracker   = (*ProcessLedger)(nil)
	_ hosts.StartGate = (*ProcessLedger)(nil)
)

// NewProcessLedger records into st on behalf of this process.
func NewProcessLedger(st LedgerStore, log *slog.Logger) *ProcessLedger {
	l := &ProcessLedger{log: log, owner: hosts.Self(),
		add:    &group[Running, int64]{commit: oneByOne(st.AddRunning)},
		remove: &group[int64, struct{}]{commit: oneByOne(func(ctx context.Context, id int64) (struct{}, error) { return struct{}{}, st.RemoveRunning(ctx, id) })},
	}
	l.replicator, _ = st.(Replicator)
	if b, ok := st.(BatchLedgerStore); ok {
		l.add.commit = b.AddRunningBatch
		l.remove.commit = func(ctx context.Context, ids []int64) ([]struct{}, error) {
			return make([]struct{}, len(ids)), b.RemoveRunningBatch(ctx, ids)
		}
	}
	return l
}

// oneByOne commits a batch one item at a time, for a store that cannot
// batch; the first failure fails the batch.
func oneByOne[T, R any](commit func(context.Context, T) (R, error)) func(context.Context, []T) ([]R, error) {
	return func(ctx context.Context, items []T) ([]R, error) {
		out := make([]R, len(items))
		for i, it := range items {
			r, err := commit(ctx, it)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
}

// Replicator is a LedgerStore that copies what it recorded off the
// machine (ha): Replicated returns once it is there, or wraps
// hosts.ErrUnrecorded.
type Replicator interface {
	Replicated(ctx context.Context) error
}

// BeforeStart makes what a local command's record will depend on (the
// approval it claimed) safe before the command starts
// (hosts.StartGate): nil at once for a store that does not replicate.
func (l *ProcessLedger) BeforeStart(ctx context.Context) error {
	if l.replicator == nil {
		return nil
	}
	return l.replicator.Replicated(ctx)
}

// Started records p until the returned func is called. The approval p's
// run claimed (p.Approval) is marked started in the same transaction.
// An error wrapping hosts.ErrUnrecorded (the row is on disk but could
// not be replicated) stops the command; done still forgets its row once
// it has stopped.
func (l *ProcessLedger) Started(ctx context.Context, p hosts.Process) (func(), error) {
	id, err := l.add.do(ctx, Running{Process: p, Owner: l.owner})
	done := func() {
		if _, err := l.remove.do(ctx, id); err != nil {
			l.log.Warn("forget an ended command", "host", p.Host, "err", err)
		}
	}
	switch {
	case errors.Is(err, hosts.ErrUnrecorded) && id != 0:
		return done, err
	case errors.Is(err, hosts.ErrUnrecorded):
		return nil, err
	case err != nil:
		// The command runs anyway: a crash now would leave it to its
		// own deadline, as before there was a ledger.
		l.log.Warn("record a running command", "host", p.Host, "err", err)
		return nil, nil
	}
	return done, nil
}
