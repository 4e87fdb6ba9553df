package main

import (
	"context"
	"fmt"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/store"
)

// executorStore is the store as hosts/executor sees it: its audit trail
// and its record of the commands running, in the executor's own types.
type executorStore struct {
	st *store.Store
	// fence, when set, has a running command's record copied off the
	// machine (ha with store/replica) before AddRunning returns: a
	// successor then reports it cut instead of knowing nothing of it.
	// A record that cannot be copied stops the command
	// (hosts.ErrUnrecorded): a successor would read its approval as
	// "never started".
	fence *fenceGate
}

var (
	_ executor.BatchAuditor     = executorStore{}
	_ executor.BatchLedgerStore = executorStore{}
	_ executor.FollowUpFinisher = (*store.Approvals)(nil)
)

// Audit appends e to the audit trail.
func (s executorStore) Audit(ctx context.Context, e executor.AuditEntry) error {
	return s.st.Audit().Audit(ctx, store.AuditEntry(e))
}

// AuditBatch appends entries to the audit trail in one commit.
func (s executorStore) AuditBatch(ctx context.Context, entries []executor.AuditEntry) error {
	rows := make([]store.AuditEntry, len(entries))
	for i, e := range entries {
		rows[i] = store.AuditEntry(e)
	}
	return s.st.Audit().AuditBatch(ctx, rows)
}

// AddRunning records a command that has started, and marks the approval
// it claimed used in the same transaction.
func (s executorStore) AddRunning(ctx context.Context, r executor.Running) (int64, error) {
	id, err := s.st.Jobs().AddRunning(ctx, runningRow(r))
	if err == nil {
		err = s.replicated(ctx)
	}
	return id, err
}

// Replicated returns once what was recorded (an approval claimed) is off
// the machine, before a local command starts (executor.Replicator).
func (s executorStore) Replicated(ctx context.Context) error { return s.replicated(ctx) }

// replicated returns once the records are off the machine, where they
// are replicated, or says they could not be (hosts.ErrUnrecorded: the
// rows are on disk, and the commands they record must not go on).
func (s executorStore) replicated(ctx context.Context) error {
	if s.fence == nil {
		return nil
	}
	if s.fence.replicate(ctx) != nil {
		return hosts.ErrUnrecorded
	}
	if err := s.fence.err(); err != nil {
		// The lease lapsed while the record was copied: a successor
		// may already have started from a replica without it.
		return fmt.Errorf("%w (%v)", hosts.ErrUnrecorded, err)
	}
	return nil
}

// AddRunningBatch records commands that have started in one transaction,
// each with its approval.
func (s executorStore) AddRunningBatch(ctx context.Context, rs []executor.Running) ([]int64, error) {
	rows := make([]store.RunningCommand, len(rs))
	for i, r := range rs {
		rows[i] = runningRow(r)
	}
	ids, err := s.st.Jobs().AddRunningBatch(ctx, rows)
	if err == nil {
		err = s.replicated(ctx)
	}
	return ids, err
}

// RemoveRunningBatch forgets commands that have ended, in one transaction.
func (s executorStore) RemoveRunningBatch(ctx context.Context, ids []int64) error {
	return s.st.Jobs().RemoveRunningBatch(ctx, ids)
}

func runningRow(r executor.Running) store.RunningCommand {
	return store.RunningCommand{Host: r.Host, PID: r.PID, Start: r.Start, Boot: r.Boot, Token: r.Token,
		Command: r.Command, Label: r.Label, OwnerPID: r.Owner.PID, OwnerStart: r.Owner.Start, OwnerBoot: r.Owner.Boot, Approval: r.Approval}
}

// RemoveRunning forgets a command that has ended.
func (s executorStore) RemoveRunning(ctx context.Context, id int64) error {
	return s.st.Jobs().RemoveRunning(ctx, id)
}
