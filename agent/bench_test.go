package agent

import (
	"context"
	"iter"
	"testing"

	"github.com/opsbot/opsbot/store"
)

// BenchmarkLoopPerDelta is the loop's own cost per streamed text delta:
// a fake model streams 1,000 deltas, the caller's emit does nothing, and
// history is in memory, so only the loop is measured.
func BenchmarkLoopPerDelta(b *testing.B) {
	const deltas = 1000
	model := ProviderFunc(func(_ context.Context, _ Request) iter.Seq[StreamEvent] {
		return func(yield func(StreamEvent) bool) {
			for range deltas {
				if !yield(StreamEvent{Kind: EventText, Text: "word "}) {
					return
				}
			}
			yield(StreamEvent{Kind: EventStop, StopReason: StopEndTurn})
		}
	})
	a := &Agent{Provider: model, Tools: NewRegistry(), History: NewMemoryHistory()}
	emit := func(Event) {}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := a.Turn(context.Background(), SessionInfo{ID: int64(i)}, "go", emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
}

// BenchmarkToolDispatch is the loop's cost per tool call: each step the
// model asks for one no-op tool, ten steps a turn; with history in memory
// (the loop alone) and in SQLite (what a deployment pays: two commits a
// step, each fsynced).
func BenchmarkToolDispatch(b *testing.B) {
	b.Run("history=memory", func(b *testing.B) { benchDispatch(b, NewMemoryHistory()) })
	b.Run("history=sqlite", func(b *testing.B) {
		st, err := store.Open(context.Background(), store.Config{Path: b.TempDir() + "/bench.db"})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchDispatch(b, sqliteSessions{StoreHistory{st}, st})
	})
}

// sqliteSessions creates the session each benchmark turn needs.
type sqliteSessions struct {
	StoreHistory
	st *store.Store
}

func (h sqliteSessions) Load(ctx context.Context, id int64) ([]Message, int64, error) {
	h.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "bench", Channel: "c", Thread: itoa(int(id))})
	return h.StoreHistory.Load(ctx, id)
}

func benchDispatch(b *testing.B, h History) {
	const calls = 10
	step := 0
	model := ProviderFunc(func(_ context.Context, _ Request) iter.Seq[StreamEvent] {
		return func(yield func(StreamEvent) bool) {
			step++
			if step%(calls+1) == 0 {
				yield(StreamEvent{Kind: EventText, Text: "done"})
				yield(StreamEvent{Kind: EventStop, StopReason: StopEndTurn})
				return
			}
			yield(StreamEvent{Kind: EventToolCall, ToolCall: Block{Type: BlockToolUse, ID: "t", Name: "noop", Input: []byte(`{"x":1}`)}})
			yield(StreamEvent{Kind: EventStop, StopReason: StopToolUse})
		}
	})
	noop := funcTool{"noop", func(context.Context, ToolCall) ToolResult { return ToolResult{Content: "ok"} }}
	a := &Agent{Provider: model, Tools: NewRegistry(noop), History: h, MaxSteps: calls + 1}
	emit := func(Event) {}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := a.Turn(context.Background(), SessionInfo{ID: int64(i + 1)}, "go", emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/dispatch")
}
