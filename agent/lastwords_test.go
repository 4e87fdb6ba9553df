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

// A model that calls a tool on the last step, which may call none, gets
// opsbot's list of what ran instead of silence, on both wire formats, and
// the call it asked for does not run.
func TestLastStepThatCallsAToolSaysWhatRan(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		f, p := w.model(t,
			testfake.Use("c1", "Checking.", "run_command", run("web-1", "uptime")),
			testfake.Use("c2", "", "run_command", run("web-1", "df -h")))
		h, sess := sqliteSession(t)
		fl := &fleet{outputs: map[string]string{"uptime": "up 3 days"}}
		a := investigator(p, h, fl)
		a.MaxSteps = 2
		ev := &testfake.Recorder{}
		if err := a.Turn(context.Background(), sess, "check web-1", ev.Emit); !errors.Is(err, agent.ErrMaxSteps) {
			t.Fatalf("err = %v; want ErrMaxSteps", err)
		}
		if !noToolUse(f.Requests()[1].Body) {
			t.Error("the last step was offered tools")
		}
		want := "Checking.\n\nThe model gave no answer; this is what ran:\n- `run_command {\"command\":\"uptime\",\"target\":\"web-1\"}`"
		if !strings.HasPrefix(ev.Text(), want) || !strings.Contains(ev.Text(), "not run: the turn reached its step limit") {
			t.Errorf("the thread reads %q; want it to start %q", ev.Text(), want)
		}
		if runs := fl.runs(); len(runs) != 1 {
			t.Errorf("ran %v; want uptime alone", runs)
		}
	})
}
