package agent_test

import (
	"context"
	"iter"
	"strconv"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/persist"

	"github.com/opsbot/opsbot/store"
)

// BenchmarkLoopPerDelta is the loop's own cost per streamed text delta:
// a fake model streams 1,000 deltas, the caller's emit does nothing, and
// history is in memory, so only the loop is measured.
func BenchmarkLoopPerDelta(b *testing.B) {
	const deltas = 1000
	model := agent.ProviderFunc(func(_ context.Context, _ agent.Request) iter.Seq[agent.StreamEvent] {
		return func(yield func(agent.StreamEvent) bool) {
			for range deltas {
				if !yield(agent.StreamEvent{Kind: agent.EventText, Text: "word "}) {
					return
				}
			}
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
		}
	})
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(), History: agent.NewMemoryHistory()}
	emit := func(agent.Event) {}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := a.Turn(context.Background(), agent.SessionInfo{ID: int64(i)}, "go", emit); err != nil {
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
	b.Run("history=memory", func(b *testing.B) { benchDispatch(b, agent.NewMemoryHistory()) })
	b.Run("history=sqlite", func(b *testing.B) {
		st, err := store.Open(context.Background(), store.Config{Path: b.TempDir() + "/bench.db"})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchDispatch(b, sqliteSessions{persist.History{Store: st}, st})
	})
}

// sqliteSessions creates the session each benchmark turn needs.
type sqliteSessions struct {
	persist.History
	st *store.Store
}

func (h sqliteSessions) Load(ctx context.Context, id int64) ([]agent.Message, int64, error) {
	h.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "bench", Channel: "c", Thread: strconv.Itoa(int(id))})
	return h.History.Load(ctx, id)
}

func benchDispatch(b *testing.B, h agent.History) {
	const calls = 10
	step := 0
	model := agent.ProviderFunc(func(_ context.Context, _ agent.Request) iter.Seq[agent.StreamEvent] {
		return func(yield func(agent.StreamEvent) bool) {
			step++
			if step%(calls+1) == 0 {
				yield(agent.StreamEvent{Kind: agent.EventText, Text: "done"})
				yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
				return
			}
			yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{Type: agent.BlockToolUse, ID: "t", Name: "noop", Input: []byte(`{"x":1}`)}})
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopToolUse})
		}
	})
	noop := testfake.Tool{Name: "noop", Fn: func(context.Context, agent.ToolCall) agent.ToolResult { return agent.ToolResult{Content: "ok"} }}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(noop), History: h, MaxSteps: calls + 1}
	emit := func(agent.Event) {}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := a.Turn(context.Background(), agent.SessionInfo{ID: int64(i + 1)}, "go", emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/dispatch")
}
