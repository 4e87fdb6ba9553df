package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent"
)

//go:embed task.md
var taskDescription string

// taskName is the task tool's name: a subagent's registry lacks it.
const taskName = "task"

// Task runs a subagent: a fresh history, the same tools but `task`, and
// only its final text comes back. It keeps a side investigation from
// filling the parent's context.
type Task struct {
	// Parent is the agent whose provider, tools and limits the subagent
	// shares.
	Parent *agent.Agent
}

var _ agent.Tool = (*Task)(nil)

// Spec describes the tool.
func (*Task) Spec() agent.ToolSpec {
	return spec(taskName, taskDescription,
		`{"type":"object","properties":{"prompt":{"type":"string","description":"the whole task for the subagent"}},"required":["prompt"]}`)
}

// Describe is the status line.
func (*Task) Describe(call agent.ToolCall) string { return "delegating to a subagent" }

// Concurrent is true: subagents of one step work at once. A call of
// theirs that needs people waits for the turn's card slot
// (agent.OneCardAtATime), so that cards still come one at a time.
func (*Task) Concurrent(agent.ToolCall) bool { return true }

// Call runs the subagent to the end of its turn.
func (t *Task) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := decodeInput(call, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
		return agent.Errorf("task needs a non-empty prompt")
	}
	sub := *t.Parent
	sub.Tools = t.Parent.Tools.Without(taskName)
	sub.History = agent.NewMemoryHistory()
	sub.Notices = nil // job news belongs to the parent, which reads it
	// The session stays the parent's: jobs the subagent starts report to
	// the parent's thread and approvals bind to it. Its history is its
	// own, in memory.
	sess := call.Session
	var final strings.Builder
	var turnErr error
	err := sub.Turn(ctx, sess, in.Prompt, func(ev agent.Event) {
		switch ev.Kind {
		case agent.TextDelta:
			final.WriteString(ev.Text)
		case agent.ToolStarted:
			final.Reset() // only the text after the last tool call is the answer
			call.Emit(ev)
		case agent.ToolFinished, agent.ApprovalPending, agent.Notice:
			call.Emit(ev) // people must still see approvals and activity
		case agent.TurnError:
			turnErr = ev.Err
		}
	})
	if err == nil {
		err = turnErr
	}
	if err != nil {
		return agent.Errorf("the subagent failed: %v; partial answer: %s", err, final.String())
	}
	answer := strings.TrimSpace(final.String())
	return agent.ToolResult{Content: answer, Summary: fmt.Sprintf("subagent answered (%d chars)", len(answer))}
}
