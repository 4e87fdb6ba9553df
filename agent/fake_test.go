package agent

import (
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/store"
)

// scripted is a fake model: each call replays the next script step and
// records the request it got. A step may block until a channel closes or
// the ctx ends, to test cancellation mid-stream.
type scripted struct {
	mu       sync.Mutex
	steps    []func(ctx context.Context, req Request, yield func(StreamEvent) bool)
	requests []Request
}

func (s *scripted) Stream(ctx context.Context, req Request) iter.Seq[StreamEvent] {
	return func(yield func(StreamEvent) bool) {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		n := len(s.requests)
		var step func(context.Context, Request, func(StreamEvent) bool)
		if n <= len(s.steps) {
			step = s.steps[n-1]
		}
		s.mu.Unlock()
		if step == nil {
			yield(StreamEvent{Kind: EventText, Text: "(script ended)"})
			yield(StreamEvent{Kind: EventStop, StopReason: StopEndTurn})
			return
		}
		step(ctx, req, yield)
	}
}

func (s *scripted) reqs() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// say is a step that answers with text, in pieces.
func say(pieces ...string) func(context.Context, Request, func(StreamEvent) bool) {
	return func(_ context.Context, _ Request, yield func(StreamEvent) bool) {
		for _, p := range pieces {
			if !yield(StreamEvent{Kind: EventText, Text: p}) {
				return
			}
		}
		yield(StreamEvent{Kind: EventUsage, Usage: Usage{InputTokens: 10, OutputTokens: 5}})
		yield(StreamEvent{Kind: EventStop, StopReason: StopEndTurn})
	}
}

// use is a step that asks for tool calls (name, JSON input pairs).
func use(text string, calls ...string) func(context.Context, Request, func(StreamEvent) bool) {
	return func(_ context.Context, req Request, yield func(StreamEvent) bool) {
		if text != "" && !yield(StreamEvent{Kind: EventText, Text: text}) {
			return
		}
		for i := 0; i+1 < len(calls); i += 2 {
			id := "toolu_" + calls[i] + "_" + string(rune('a'+i/2)) + "_" + itoa(len(req.Messages))
			if !yield(StreamEvent{Kind: EventToolCall, ToolCall: Block{Type: BlockToolUse, ID: id, Name: calls[i], Input: json.RawMessage(calls[i+1])}}) {
				return
			}
		}
		yield(StreamEvent{Kind: EventStop, StopReason: StopToolUse})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// funcTool is a hand-written fake tool.
type funcTool struct {
	name string
	fn   func(ctx context.Context, call ToolCall) ToolResult
}

func (f funcTool) Spec() ToolSpec {
	return ToolSpec{Name: f.name, Description: "test tool " + f.name, InputSchema: schema(`{"type":"object"}`)}
}
func (f funcTool) Call(ctx context.Context, call ToolCall) ToolResult { return f.fn(ctx, call) }

func echoTool() Tool {
	return funcTool{"echo", func(_ context.Context, call ToolCall) ToolResult {
		return ToolResult{Content: "echo:" + string(call.Input), Summary: "echoed"}
	}}
}

// testStore opens a real SQLite file and one session in it.
func testStore(t *testing.T) (*store.Store, SessionInfo) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "agent.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess, _, err := st.Sessions().SessionFor(context.Background(), store.ThreadKey{Platform: "test", Channel: "c", Thread: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return st, SessionInfo{ID: sess.ID, Requester: "alice", Platform: "test", Channel: "c"}
}

// recorder collects a turn's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
	on     func(Event)
}

func (r *recorder) emit(ev Event) {
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
		if ev.Kind == TextDelta {
			s += ev.Text
		}
	}
	return s
}

func (r *recorder) kinds(k TurnEventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, ev := range r.events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func mustLoad(t *testing.T, h History, id int64) []Message {
	t.Helper()
	msgs, _, err := h.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
