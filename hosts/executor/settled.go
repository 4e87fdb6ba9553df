package executor

import (
	"context"

	"github.com/opsbot/opsbot/hosts"
)

// FollowUpFinisher closes an approval's follow-up (it returns whether this
// call closed it); *store.Store has it.
type FollowUpFinisher interface {
	FinishFollowUp(ctx context.Context, approvalID string) (bool, error)
}

// Settled is a hosts.Executor that closes, once a run has returned, the
// follow-up of the approval the run claimed (ExecOptions.Approval): the
// ProcessLedger closed it as the command started, unless the command never
// started (an unknown host, a refused connection), which the run's result
// says.
type Settled struct {
	hosts.Executor
	FollowUps FollowUpFinisher
}

var _ hosts.Executor = Settled{}

// Exec runs command, then settles its approval.
func (e Settled) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	if opts.Approval != "" {
		defer e.FollowUps.FinishFollowUp(context.WithoutCancel(ctx), opts.Approval)
	}
	return e.Executor.Exec(ctx, names, command, opts)
}
