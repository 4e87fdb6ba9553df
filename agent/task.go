package agent

import (
	"context"
	"fmt"
	"strings"
)

const taskToolName = "task"

// TaskTool runs a subagent: a fresh history, the same tools but `task`,
// and only its final text comes back. It keeps a side investigation from
// filling the parent's context.
type TaskTool struct {
	// Parent is the agent whose provider, tools and limits the subagent
	// shares.
	Parent *Agent
}

// Spec describes the tool.
func (*TaskTool) Spec() ToolSpec {
	return ToolSpec{Name: taskToolName, Description: "Delegate a self-contained investigation to a subagent with a fresh context and the same tools. Only its final answer comes back; give it everything it needs in the prompt.",
		InputSchema: schema(`{"type":"object","properties":{"prompt":{"type":"string","description":"the whole task for the subagent"}},"required":["prompt"]}`)}
}

// Describe is the status line.
func (*TaskTool) Describe(call ToolCall) string { return "delegating to a subagent" }

// Call runs the subagent to the end of its turn.
func (t *TaskTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := decodeInput(call, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
		return Errorf("task needs a non-empty prompt")
	}
	sub := *t.Parent
	sub.Tools = t.Parent.Tools.Without(taskToolName)
	sub.History = NewMemoryHistory()
	sub.Notices = nil // job news belongs to the parent, which reads it
	// The session stays the parent's: jobs the subagent starts report to
	// the parent's thread and approvals bind to it. Its history is its
	// own, in memory.
	sess := call.Session
	var final strings.Builder
	var turnErr error
	err := sub.Turn(ctx, sess, in.Prompt, func(ev Event) {
		switch ev.Kind {
		case TextDelta:
			final.WriteString(ev.Text)
		case ToolStarted:
			final.Reset() // only the text after the last tool call is the answer
			call.Emit(ev)
		case ToolFinished, ApprovalPending, Notice:
			call.Emit(ev) // people must still see approvals and activity
		case TurnError:
			turnErr = ev.Err
		}
	})
	if err == nil {
		err = turnErr
	}
	if err != nil {
		return Errorf("the subagent failed: %v; partial answer: %s", err, final.String())
	}
	answer := strings.TrimSpace(final.String())
	return ToolResult{Content: answer, Summary: fmt.Sprintf("subagent answered (%d chars)", len(answer))}
}
