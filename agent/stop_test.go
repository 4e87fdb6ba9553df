package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// errByBob is a person's Stop: a cause that is not a shutdown.
var errByBob = errors.New("stopped by @bob")

// A Stop ends like the time limit, on both wire formats: what ran stays
// in the history, each call saying how far it got (the killed sleep ran,
// so it does not say "could not run"), and one last call with no tools
// answers with what was found. Its status line says it stopped.
func TestStopEndsWithTheModelsSummary(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		summary := testfake.Reply{Build: func(body map[string]any) []byte {
			if !noToolUse(body) {
				return w.sse(testfake.Use("c9", "", "run_command", run("web-1", "uptime")))
			}
			return w.sse(testfake.Say("Found: " + strings.Join(w.results(body), " | ")))
		}}
		f, p := w.modelReplies(t,
			testfake.Reply{Raw: w.sse(testfake.Use("c1", "", "run_command", run("web-1", "touch /tmp/x"), "run_command", run("web-1", "sleep 30"))), Once: true},
			summary, testfake.Reply{Raw: w.sse(testfake.Say("OK.")), Once: true})
		h, sess := sqliteSession(t)
		ctx, stop := agent.Stoppable(context.Background())
		fl := &fleet{outputs: map[string]string{"sleep 30": "slept a while\n"}, during: func(c context.Context, command string) {
			if command == "sleep 30" {
				stop(errByBob) // the person presses Stop while it runs
				<-c.Done()
			}
		}}
		a := investigator(p, h, fl)
		ev := &testfake.Recorder{}
		err := a.Turn(ctx, sess, "touch it and wait", ev.Emit)
		if !errors.Is(err, agent.ErrStopped) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want ErrStopped", err)
		}
		reqs := f.Requests()
		last := reqs[1].Body
		results := fmt.Sprint(w.results(last))
		if !noToolUse(last) || !strings.Contains(fmt.Sprint(w.userTexts(last)), "The person stopped this turn") {
			t.Errorf("the last call may call tools or does not say why it ends: %v", w.userTexts(last))
		}
		if !strings.Contains(results, "exit 0") || !strings.Contains(results, "stopped the turn while this was running, so it may have partly run") ||
			!strings.Contains(results, "slept a while") || strings.Contains(results, "could not run") {
			t.Errorf("the last call does not say truly how each command ended: %s", results)
		}
		if !strings.HasPrefix(ev.Text(), "Found: ") {
			t.Errorf("the thread reads %q; want the model's summary", ev.Text())
		}
		if got := finished(ev, "sleep 30"); got != "stopped" {
			t.Errorf("the sleep's status line reads %q; want stopped", got)
		}
		if err := a.Turn(context.Background(), sess, "what did you do?", (&testfake.Recorder{}).Emit); err != nil {
			t.Fatal(err)
		}
		if texts := fmt.Sprint(w.userTexts(f.Requests()[2].Body)); !strings.Contains(texts, "touch it and wait") {
			t.Errorf("the stopped turn is not in the history: %s", texts)
		}
	})
}

// finished is the Summary of the ToolFinished event of the call that ran
// command, or "".
func finished(ev *testfake.Recorder, command string) string {
	for _, e := range ev.Kinds(agent.ToolFinished) {
		if len(e.Runs) == 1 && e.Runs[0].Command == command {
			return e.Summary
		}
	}
	return ""
}

// A Stop pressed again while the last call streams ends the turn at once,
// on both wire formats: opsbot says what ran, and the history is valid.
func TestSecondStopEndsTheLastCallAtOnce(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		held := make(chan struct{})
		_, p := w.modelReplies(t,
			testfake.Reply{Raw: w.sse(testfake.Use("c1", "", "run_command", run("web-1", "sleep 30"))), Once: true},
			testfake.Reply{Raw: w.sse(testfake.Say("Found so far: the sleep")), HoldAfter: 3, Held: held})
		h, sess := sqliteSession(t)
		ctx, stop := agent.Stoppable(context.Background())
		fl := &fleet{outputs: map[string]string{}, during: func(c context.Context, _ string) {
			stop(errByBob)
			<-c.Done()
		}}
		go func() {
			<-held
			stop(errByBob) // pressed again
		}()
		ev := &testfake.Recorder{}
		if err := investigator(p, h, fl).Turn(ctx, sess, "wait", ev.Emit); !errors.Is(err, agent.ErrStopped) {
			t.Fatalf("err = %v; want ErrStopped", err)
		}
		if !strings.Contains(ev.Text(), "this is what ran:\n- `run_command") {
			t.Errorf("the thread reads %q; want what ran", ev.Text())
		}
		if calls := agent.PendingToolCalls(testfake.Load(t, h, sess.ID)); len(calls) != 0 {
			t.Errorf("history ends with unanswered calls: %v", calls)
		}
	})
}

// A model that calls a tool on a stopped turn's last call, though it may
// not, gets opsbot's list of what ran, on both wire formats.
func TestStopLastCallThatCallsAToolSaysWhatRan(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		_, p := w.model(t,
			testfake.Use("c1", "Checking.", "run_command", run("web-1", "sleep 30")),
			testfake.Use("c2", "", "run_command", run("web-1", "uptime")))
		h, sess := sqliteSession(t)
		ctx, stop := agent.Stoppable(context.Background())
		fl := &fleet{outputs: map[string]string{}, during: func(c context.Context, _ string) {
			stop(errByBob)
			<-c.Done()
		}}
		ev := &testfake.Recorder{}
		if err := investigator(p, h, fl).Turn(ctx, sess, "wait", ev.Emit); !errors.Is(err, agent.ErrStopped) {
			t.Fatalf("err = %v; want ErrStopped", err)
		}
		want := "Checking.\n\nThe model gave no answer; this is what ran:\n- `run_command"
		if !strings.HasPrefix(ev.Text(), want) || !strings.Contains(ev.Text(), "interrupted: the person stopped the turn while this was running") {
			t.Errorf("the thread reads %q; want it to start %q", ev.Text(), want)
		}
		if n := len(fl.runs()); n != 1 {
			t.Errorf("%d commands ran; want the sleep alone", n)
		}
		if calls := agent.PendingToolCalls(testfake.Load(t, h, sess.ID)); len(calls) != 0 {
			t.Errorf("history ends with unanswered calls: %v", calls)
		}
	})
}

// A shutdown is no Stop: the call under way stays unanswered, to be
// resumed after the restart, and no last call is made.
func TestShutdownKeepsTheCallForTheRestart(t *testing.T) {
	t.Parallel()
	h, sess := sqliteSession(t)
	model := &testfake.Model{Steps: []testfake.Step{testfake.Calls("", "wait", `{}`), testfake.Text("must not be asked")}}
	ctx, stop := agent.Stoppable(context.Background())
	wait := testfake.Tool{Name: "wait", Fn: func(ctx context.Context, _ agent.ToolCall) agent.ToolResult {
		stop(agent.ErrShutdown)
		<-ctx.Done()
		return agent.Errorf("cancelled")
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(wait), History: h}
	err := a.Turn(ctx, sess, "wait", (&testfake.Recorder{}).Emit)
	if !errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrStopped) {
		t.Fatalf("err = %v; want a shutdown's cancel", err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model calls; want 1 (no last call on a shutdown)", n)
	}
	if calls := agent.PendingToolCalls(testfake.Load(t, h, sess.ID)); len(calls) != 1 {
		t.Errorf("%d calls left to resume; want 1", len(calls))
	}
}
