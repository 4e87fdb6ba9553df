package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

//go:embed run_command.md
var runCommandDescription string

// RunCommand is `run_command`: a command on a target, through the guard.
type RunCommand struct {
	Guard *approvals.Guard
	// MaxTimeout caps what the model may ask for (default 10m).
	MaxTimeout time.Duration
}

var _ agent.Tool = (*RunCommand)(nil)

type runCommandInput struct {
	Target  string `json:"target"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // seconds
}

// Spec describes the tool.
func (*RunCommand) Spec() agent.ToolSpec {
	return spec("run_command", runCommandDescription,
		`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"command":{"type":"string"},"timeout":{"type":"integer","description":"seconds, default 60"}},"required":["target","command"]}`)
}

// Describe is the status line.
func (*RunCommand) Describe(call agent.ToolCall) string {
	var in runCommandInput
	if decodeInput(call, &in) != nil {
		return "running a command"
	}
	return fmt.Sprintf("running `%s` on %s…", in.Command, in.Target)
}

// Concurrent reports whether the call asks no person, so that it may run
// at the same time as the step's other calls.
func (t *RunCommand) Concurrent(call agent.ToolCall) bool {
	var in runCommandInput
	if decodeInput(call, &in) != nil {
		return true // refused at once
	}
	return asksNoOne(t.Guard, in.Target, in.Command)
}

// timeout is the time limit of a command asked for by in: the model's,
// within MaxTimeout; a minute when it asks none.
func (t *RunCommand) timeout(in runCommandInput) time.Duration {
	if d := min(time.Duration(max(in.Timeout, 0))*time.Second, orDefault(t.MaxTimeout, 10*time.Minute)); d > 0 {
		return d
	}
	return time.Minute
}

// Limit is the longest call may run: its command's time limit (the
// bot's task cards ask their stream for that much life).
func (t *RunCommand) Limit(call agent.ToolCall) time.Duration {
	var in runCommandInput
	if decodeInput(call, &in) != nil {
		return 0
	}
	return t.timeout(in)
}

// Call authorizes, runs, and reports.
func (t *RunCommand) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	if strings.TrimSpace(in.Target) == "" || strings.TrimSpace(in.Command) == "" {
		return agent.Errorf("run_command needs a target and a command")
	}
	permit, err := Authorize(ctx, t.Guard, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	timeout := t.timeout(in)
	results := t.Guard.Exec.Exec(ctx, permit.Hosts, in.Command, hosts.ExecOptions{Confinement: permit.Confinement, Timeout: timeout, Dir: call.Session.Cwd})
	res := formatResults(in.Command, results)
	res.Runs = runsOf(in.Command, results)
	for i := range res.Runs {
		res.Runs[i].Approved = permit.Approved
	}
	return res
}
