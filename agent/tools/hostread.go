package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"mvdan.cc/sh/v3/syntax"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

// hostRead is a read tool that runs one command it builds from its input
// (tail_file, read_file, grep, journal) through the guard, exactly as
// run_command would run it: the policy decides on the built command, so
// a secret path is masked or waits for approval there as it would in
// run_command, and nothing the model passes reaches a shell unquoted.
type hostRead struct {
	guard *approvals.Guard
	// build is the target and the command of a call, or why there is none.
	build func(call agent.ToolCall) (target, command string, err error)
}

// concurrent reports whether the call asks no person (agent.Concurrent).
func (h hostRead) concurrent(call agent.ToolCall) bool {
	target, command, err := h.build(call)
	return err != nil || asksNoOne(h.guard, target, command)
}

// run builds the command and runs it as run_command.
func (h hostRead) run(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	target, command, err := h.build(call)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	input, _ := json.Marshal(runCommandInput{Target: target, Command: command})
	return (&RunCommand{Guard: h.guard}).Call(ctx, agent.ToolCall{ID: call.ID, Name: "run_command", Input: input, Session: call.Session, Emit: call.Emit})
}

// quote is s as one bash word, whatever it holds.
func quote(s string) (string, error) {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "", fmt.Errorf("%q cannot be quoted for a shell: %v", s, err)
	}
	return q, nil
}
