package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// Every end gives an answer, on both wire formats: when the time limit
// cuts a command, one last call with no tools asks the model for what it
// found, and the model reads what the cut command reported.
func TestDeadlineEndsWithTheModelsSummary(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		h, sess := sqliteSession(t)
		wait := testfake.Tool{Name: "wait", Fn: func(ctx context.Context, _ agent.ToolCall) agent.ToolResult {
			<-ctx.Done() // a command the time limit cuts
			return agent.Errorf("cancelled")
		}}
		f, p := w.modelReplies(t,
			testfake.Reply{Raw: w.sse(testfake.Use("c1", "Checking 0.", "wait", `{}`)), Once: true},
			w.reader(func(results []string) string { return "Found: " + strings.Join(results, " | ") }))
		a := &agent.Agent{Provider: p, Tools: agent.NewRegistry(wait), History: h, TurnTimeout: 2 * time.Second}
		ev := &testfake.Recorder{}
		if err := a.Turn(context.Background(), sess, "why is web-1 slow?", ev.Emit); !errors.Is(err, agent.ErrDeadline) {
			t.Fatalf("err = %v; want ErrDeadline", err)
		}
		if !strings.Contains(ev.Text(), "Found: ") || !strings.Contains(ev.Text(), "time limit") {
			t.Errorf("the thread reads %q; want the model's summary of the cut command", ev.Text())
		}
		reqs := f.Requests()
		last := strings.Join(w.userTexts(reqs[len(reqs)-1].Body), " ")
		if !strings.Contains(last, "reached its time limit") {
			t.Errorf("the last call does not say the time is up: %s", last)
		}
	})
}
