package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

const todoToolName = "todo"

// TodoItem is one step of the agent's plan.
type TodoItem struct {
	Text   string `json:"text"`
	Status string `json:"status"` // pending, in_progress, done
}

// TodoTool keeps a plan per session; the model rewrites it whole each time.
// At most one item is in progress, which keeps the model working on one
// step at a time.
type TodoTool struct {
	mu    sync.Mutex
	lists map[int64][]TodoItem
}

// NewTodoTool returns the `todo` tool.
func NewTodoTool() *TodoTool { return &TodoTool{lists: map[int64][]TodoItem{}} }

// Spec describes the tool.
func (*TodoTool) Spec() ToolSpec {
	return ToolSpec{Name: todoToolName, Description: "Write your plan for a multi-step investigation as the full list of items, each pending, in_progress or done. Exactly one item may be in_progress. Update it as you go.",
		InputSchema: schema(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","done"]}},"required":["text","status"]}}},"required":["items"]}`)}
}

// Call replaces the session's list after checking it.
func (t *TodoTool) Call(_ context.Context, call ToolCall) ToolResult {
	var in struct {
		Items []TodoItem `json:"items"`
	}
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	inProgress := 0
	for i, it := range in.Items {
		switch it.Status {
		case "in_progress":
			inProgress++
		case "pending", "done":
		default:
			return Errorf("item %d: status %q is not pending, in_progress or done", i+1, it.Status)
		}
		if strings.TrimSpace(it.Text) == "" {
			return Errorf("item %d has no text", i+1)
		}
	}
	if inProgress > 1 {
		return Errorf("%d items are in_progress; only one may be at a time", inProgress)
	}
	t.mu.Lock()
	t.lists[call.Session.ID] = in.Items
	t.mu.Unlock()
	text := renderTodo(in.Items)
	return ToolResult{Content: text, Summary: fmt.Sprintf("plan: %d items", len(in.Items))}
}

// Items returns a session's current list.
func (t *TodoTool) Items(sessionID int64) []TodoItem {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]TodoItem(nil), t.lists[sessionID]...)
}

func renderTodo(items []TodoItem) string {
	var b strings.Builder
	done := 0
	for _, it := range items {
		mark := map[string]string{"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}[it.Status]
		if it.Status == "done" {
			done++
		}
		fmt.Fprintf(&b, "%s %s\n", mark, it.Text)
	}
	fmt.Fprintf(&b, "(%d/%d done)", done, len(items))
	return b.String()
}

// todoReminder follows the last tool result of a step when the plan has
// open items and was not updated for a while. It sits in a tool result,
// labelled as opsbot's, so that the model cannot take it for the person.
const todoReminder = "\n\n[opsbot reminder, not part of the output above] Your todo list has open items and was not updated for a few steps: update it with the todo tool as you go."

// remind appends the todo reminder to a step's results when the model
// keeps a plan, has open items, and has not touched it for RemindAfter
// steps. A model that never used the todo tool is never reminded.
func (a *Agent) remind(t *turn, results *Message) {
	todo, ok := a.Tools.tools[todoToolName].(*TodoTool)
	if !ok || t.sinceTodo < a.remindAfter() || len(results.Content) == 0 || !todo.open(t.sess.ID) {
		return
	}
	last := &results.Content[len(results.Content)-1]
	last.Content += todoReminder
	t.sinceTodo = 0
}

// open reports whether a session's plan has items not done.
func (t *TodoTool) open(sessionID int64) bool {
	for _, it := range t.Items(sessionID) {
		if it.Status != "done" {
			return true
		}
	}
	return false
}
