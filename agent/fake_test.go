package agent_test

import (
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/agent"

	"github.com/opsbot/opsbot/store"
)

// scripted is a fake model: each call replays the next script step and
// records the request it got. A step may block until a channel closes or
// the ctx ends, to test cancellation mid-stream.
type scripted struct {
	mu       sync.Mutex
	steps    []func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool)
	requests []agent.Request
}

func (s *scripted) Stream(ctx context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
	return func(yield func(agent.StreamEvent) bool) {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		n := len(s.requests)
		var step func(context.Context, agent.Request, func(agent.StreamEvent) bool)
		if n <= len(s.steps) {
			step = s.steps[n-1]
		}
		s.mu.Unlock()
		if step == nil {
			yield(agent.StreamEvent{Kind: agent.EventText, Text: "(script ended)"})
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
			return
		}
		step(ctx, req, yield)
	}
}

func (s *scripted) reqs() []agent.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]agent.Request(nil), s.requests...)
}

// say is a step that answers with text, in pieces.
func say(pieces ...string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
	return func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
		for _, p := range pieces {
			if !yield(agent.StreamEvent{Kind: agent.EventText, Text: p}) {
				return
			}
		}
		yield(agent.StreamEvent{Kind: agent.EventUsage, Usage: agent.Usage{InputTokens: 10, OutputTokens: 5}})
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
	}
}

// use is a step that asks for tool calls (name, JSON input pairs).
func use(text string, calls ...string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
	return func(_ context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
		if text != "" && !yield(agent.StreamEvent{Kind: agent.EventText, Text: text}) {
			return
		}
		for i := 0; i+1 < len(calls); i += 2 {
			id := "toolu_" + calls[i] + "_" + string(rune('a'+i/2)) + "_" + itoa(len(req.Messages))
			if !yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{Type: agent.BlockToolUse, ID: id, Name: calls[i], Input: json.RawMessage(calls[i+1])}}) {
				return
			}
		}
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopToolUse})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// funcTool is a hand-written fake tool.
type funcTool struct {
	name string
	fn   func(ctx context.Context, call agent.ToolCall) agent.ToolResult
}

func (f funcTool) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: f.name, Description: "test tool " + f.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (f funcTool) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	return f.fn(ctx, call)
}

func echoTool() agent.Tool {
	return funcTool{"echo", func(_ context.Context, call agent.ToolCall) agent.ToolResult {
		return agent.ToolResult{Content: "echo:" + string(call.Input), Summary: "echoed"}
	}}
}

// testStore opens a real SQLite file and one session in it.
func testStore(t *testing.T) (*store.Store, agent.SessionInfo) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "agent.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess, _, err := st.SessionFor(context.Background(), store.ThreadKey{Platform: "test", Channel: "c", Thread: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return st, agent.SessionInfo{ID: sess.ID, Requester: "alice", Platform: "test", Channel: "c"}
}

// recorder collects a turn's events.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
	on     func(agent.Event)
}

func (r *recorder) emit(ev agent.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	on := r.on
	r.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ""
	for _, ev := range r.events {
		if ev.Kind == agent.TextDelta {
			s += ev.Text
		}
	}
	return s
}

func (r *recorder) kinds(k agent.TurnEventKind) []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Event
	for _, ev := range r.events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func mustLoad(t *testing.T, h agent.History, id int64) []agent.Message {
	t.Helper()
	msgs, _, err := h.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
