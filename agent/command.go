package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
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
func Authorize(ctx context.Context, guard Permitter, call ToolCall, target, command, cwd string) (approvals.Permit, error) {
	done := waitingForPeople(ctx)
	defer done()
	req := approvals.CommandRequest{Target: target, Command: command, Cwd: cwd, Channel: call.Session.Channel, SessionID: call.Session.ID,
		Requester: approvals.Person{Platform: call.Session.Platform, ID: call.Session.Requester}}
	asked := false
	permit, err := guard.Permit(ctx, req, func(p approvals.Pending) {
		asked = true
		call.Emit(Event{Kind: ApprovalPending, Tool: call.Name, ToolID: call.ID, Approval: &p})
	})
	if err == nil && asked {
		// The wait the card showed is over: the call starts now.
		call.Emit(Event{Kind: ToolStarted, Tool: call.Name, ToolID: call.ID,
			Summary: fmt.Sprintf("approved: running `%s` on %s…", strings.ReplaceAll(strings.ReplaceAll(command, "\n", " ⏎ "), "`", "'"), target)})
	}
	return permit, err
}

// refusal turns an Authorize error into the tool result the model reads.
func refusal(err error) ToolResult {
	var r *approvals.Refusal
	if errors.As(err, &r) {
		return ToolResult{Content: r.Reason, IsError: true, Summary: r.Reason}
	}
	return Errorf("%v", err)
}

// RunCommandTool is `run_command`: a command on a target, through the guard.
type RunCommandTool struct {
	Guard *approvals.Guard
	// MaxTimeout caps what the model may ask for (default 10m).
	MaxTimeout time.Duration
}

type runCommandInput struct {
	Target  string `json:"target"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // seconds
}

// Spec describes the tool.
func (*RunCommandTool) Spec() ToolSpec {
	return ToolSpec{Name: "run_command", Description: "Run a shell command on a target: a host name, group:NAME, or a comma list. A group or a list fans out: the command runs on every host at once and the result starts with one line per host (exit status), then each host's output. Prefer one command across a group to one call per host. Read-only diagnostics run at once; anything else waits for a person to approve it, and may be denied (policy_check tells which). Output is capped to its head and tail; use tail_file for logs.",
		InputSchema: schema(`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"command":{"type":"string"},"timeout":{"type":"integer","description":"seconds, default 60"}},"required":["target","command"]}`)}
}

// Describe is the status line.
func (*RunCommandTool) Describe(call ToolCall) string {
	var in runCommandInput
	if decodeInput(call, &in) != nil {
		return "running a command"
	}
	return fmt.Sprintf("running `%s` on %s…", in.Command, in.Target)
}

// Call authorizes, runs, and reports.
func (t *RunCommandTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(in.Target) == "" || strings.TrimSpace(in.Command) == "" {
		return Errorf("run_command needs a target and a command")
	}
	permit, err := Authorize(ctx, t.Guard, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	timeout := min(time.Duration(max(in.Timeout, 0))*time.Second, orDefault(t.MaxTimeout, 10*time.Minute))
	if timeout == 0 {
		timeout = time.Minute
	}
	results := t.Guard.Exec.Exec(ctx, permit.Hosts, in.Command, hosts.ExecOptions{Confinement: permit.Confinement, Timeout: timeout, Dir: call.Session.Cwd})
	res := formatResults(in.Command, results)
	res.Runs = runsOf(in.Command, results)
	for i := range res.Runs {
		res.Runs[i].Approved = permit.Approved
	}
	return res
}
