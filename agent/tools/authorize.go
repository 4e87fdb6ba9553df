package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/policy"
)

// Permitter decides whether a command may run, asking people when the
// policy says so; *approvals.Guard is one.
type Permitter interface {
	Permit(ctx context.Context, req approvals.CommandRequest, pending func(approvals.Pending)) (approvals.Permit, error)
}

var _ Permitter = (*approvals.Guard)(nil)

// Authorize asks guard whether call may run command on target, in cwd on
// the local host: the caller's session is the requester, and a request
// that waits for people is shown as the call's ApprovalPending event. The
// turn's clock stops meanwhile (the card's expiry, not the turn, decides
// how long people have). The tools and the chat's `run` ask through it.
func Authorize(ctx context.Context, guard Permitter, call agent.ToolCall, target, command, cwd string) (approvals.Permit, error) {
	done := agent.WaitingForPeople(ctx)
	defer done()
	if g, ok := guard.(*approvals.Guard); ok && !asksNoOne(g, target, command) {
		// Calls that run at once (subagents) ask people one at a time.
		release, err := agent.OneCardAtATime(ctx)
		if err != nil {
			return approvals.Permit{}, err
		}
		defer release()
	}
	req := approvals.CommandRequest{Target: target, Command: command, Cwd: cwd, Channel: call.Session.Channel, SessionID: call.Session.ID,
		Requester: approvals.Person{Platform: call.Session.Platform, ID: call.Session.Requester}}
	asked := false
	permit, err := guard.Permit(ctx, req, func(p approvals.Pending) {
		asked = true
		call.Emit(agent.Event{Kind: agent.ApprovalPending, Tool: call.Name, ToolID: call.ID, Approval: pendingApproval(p)})
	})
	if err == nil && asked {
		// The wait the card showed is over: the call starts now.
		call.Emit(agent.Event{Kind: agent.ToolStarted, Tool: call.Name, ToolID: call.ID,
			Summary: fmt.Sprintf("approved: running `%s` on %s…", strings.ReplaceAll(strings.ReplaceAll(command, "\n", " ⏎ "), "`", "'"), target)})
	}
	return permit, err
}

// pendingApproval is the guard's request as the turn reports it.
func pendingApproval(p approvals.Pending) *agent.PendingApproval {
	return &agent.PendingApproval{ID: p.ID, Target: p.Target, Command: p.Command, Reasons: p.Reasons, Requester: p.Requester,
		ExpiresAt: p.ExpiresAt, Reattached: p.Reattached}
}

// refusal turns an Authorize error into the tool result the model reads.
func refusal(err error) agent.ToolResult {
	var r *approvals.Refusal
	if errors.As(err, &r) {
		return agent.ToolResult{Content: r.Reason, IsError: true, Summary: r.Reason}
	}
	return agent.Errorf("%v", err)
}

// asksNoOne reports whether command on target is decided without a
// person: the policy allows or denies it on every host target names (an
// unknown target is refused at once). Such a call may run at the same
// time as the other calls of its step (agent.Concurrent).
func asksNoOne(guard *approvals.Guard, target, command string) bool {
	hs, err := guard.Exec.Resolve(target)
	if err != nil {
		return true
	}
	return guard.Decide(hs, command).Action != policy.Approve
}
