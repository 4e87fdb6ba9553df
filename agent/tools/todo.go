package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/agent"
)

//go:embed todo.md
var todoDescription string

// TodoItem is one step of the agent's plan.
type TodoItem struct {
	Text   string `json:"text"`
	Status string `json:"status"` // pending, in_progress, done
}

// Todo keeps a plan per session; the model rewrites it whole each time.
// At most one item is in progress, which keeps the model working on one
// step at a time. It is the loop's Planner: a plan left open for a few
// steps brings a reminder.
type Todo struct {
	mu    sync.Mutex
	lists map[int64][]TodoItem
}

var _ agent.Planner = (*Todo)(nil)

// NewTodo returns the `todo` tool.
func NewTodo() *Todo { return &Todo{lists: map[int64][]TodoItem{}} }

// Spec describes the tool.
func (*Todo) Spec() agent.ToolSpec {
	return spec("todo", todoDescription,
		`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","done"]}},"required":["text","status"]}}},"required":["items"]}`)
}

// Call replaces the session's list after checking it.
func (t *Todo) Call(_ context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		Items []TodoItem `json:"items"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	if err := checkTodo(in.Items); err != nil {
		return agent.Errorf("%v", err)
	}
	t.mu.Lock()
	t.lists[call.Session.ID] = in.Items
	t.mu.Unlock()
	text := renderTodo(in.Items)
	return agent.ToolResult{Content: text, Summary: fmt.Sprintf("plan: %d items", len(in.Items))}
}

// checkTodo says what is wrong with a list: a status not known, an item
// without text, more than one in progress.
func checkTodo(items []TodoItem) error {
	inProgress := 0
	for i, it := range items {
		switch it.Status {
		case "in_progress":
			inProgress++
		case "pending", "done":
		default:
			return fmt.Errorf("item %d: status %q is not pending, in_progress or done", i+1, it.Status)
		}
		if strings.TrimSpace(it.Text) == "" {
			return fmt.Errorf("item %d has no text", i+1)
		}
	}
	if inProgress > 1 {
		return fmt.Errorf("%d items are in_progress; only one may be at a time", inProgress)
	}
	return nil
}

// Items returns a session's current list.
func (t *Todo) Items(sessionID int64) []TodoItem {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]TodoItem(nil), t.lists[sessionID]...)
}

// Open reports whether a session's plan has items not done.
func (t *Todo) Open(sessionID int64) bool {
	for _, it := range t.Items(sessionID) {
		if it.Status != "done" {
			return true
		}
	}
	return false
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
