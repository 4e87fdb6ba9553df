package bot

import "context"

// An approval is claimed (consumed) for its one run before the command
// starts; its follow-up (store.FollowUp) stays open until the command has
// started, and is closed in the same transaction that records the running
// command (executor.ProcessLedger.Started). So after a crash, a consumed approval
// whose follow-up is still open is one whose command never started: the
// next start says so in its thread ("approved by @bob, but opsbot stopped
// before running it") — it is never silently lost, and never run twice.
// Before, the follow-up was closed first and the command started after,
// and a kill between the two left an approved command that never ran and
// nobody was told of.
//
// The claimed approval travels with the run, never beside it: the
// Guard's Permit names it (hosts.Confinement.Approval), the executors pass
// it to the Tracker (hosts.Process.Approval; executor.ProcessLedger), and
// once the run has returned what the ledger did not close is closed by
// executor.Settled (a command that never started) or here (a background
// job, whose own row records its start).

// FollowUpFinisher closes an approval's follow-up; *store.Store has it.
type FollowUpFinisher interface {
	FinishFollowUp(ctx context.Context, approvalID string) (bool, error)
}

// settleApproval closes the follow-up of approval, the one a run claimed
// (none: ""): its command was started by a path the process ledger does
// not see (a background job, whose own row records it), or failed to
// start and said so.
func settleApproval(ctx context.Context, st FollowUpFinisher, approval string) {
	if approval != "" {
		st.FinishFollowUp(context.WithoutCancel(ctx), approval)
	}
}
