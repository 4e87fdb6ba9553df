package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/persist"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// costly is a scripted turn whose usage is 100 prompt tokens, 40 of
// them from the cache, and 10 output tokens: 110 by the budget.
func costly(t testfake.Turn) testfake.Turn {
	t.Input, t.Cached = 100, 40
	return t
}

// A turn that reaches its token budget ends with the model's summary, on
// both wire formats: the calls of the response that crossed the budget do
// not run, the last call offers no tool and says why, and the turn says
// which budget. Every token is counted from the providers' usage fields,
// cached ones included, and shows in opsbot_llm_tokens_total by kind.
func TestTurnBudgetEndsWithASummary(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		summary := testfake.Reply{Build: func(body map[string]any) []byte {
			return w.sse(costly(testfake.Say("Summary: uptime and df are fine; memory is left to check.")))
		}}
		f, p := w.modelReplies(t,
			testfake.Reply{Raw: w.sse(costly(testfake.Use("c1", "", "run_command", run("web-1", "uptime")))), Once: true},
			testfake.Reply{Raw: w.sse(costly(testfake.Use("c2", "", "run_command", run("web-1", "df -h")))), Once: true},
			testfake.Reply{Raw: w.sse(costly(testfake.Use("c3", "", "run_command", run("web-1", "free -m")))), Once: true},
			summary)
		m, reg := newTestMetrics(t)
		h, sess := sqliteSession(t)
		fl := &fleet{outputs: map[string]string{"uptime": "up 3 days", "df -h": "42%"}}
		a := investigator(m.Provider(w.name, p), h, fl)
		a.Budget.Turn = 250 // the third response crosses it: 330 tokens
		ev := &testfake.Recorder{}
		err := a.Turn(context.Background(), sess, "check web-1", ev.Emit)
		var over *agent.BudgetError
		if !errors.As(err, &over) || over.Scope != agent.BudgetTurn || over.Limit != 250 || over.Used != 330 {
			t.Fatalf("err = %v; want the turn budget of 250, 330 used", err)
		}
		if runs := fl.runs(); len(runs) != 2 {
			t.Errorf("ran %v; want uptime and df only", runs)
		}
		reqs := f.Requests()
		last := reqs[len(reqs)-1].Body
		if len(reqs) != 4 || !noToolUse(last) || !strings.Contains(fmt.Sprint(w.userTexts(last)), "used its token budget") {
			t.Errorf("%d requests; the last may call tools or does not say why: %v", len(reqs), w.userTexts(last))
		}
		if !strings.Contains(fmt.Sprint(w.results(last)), "not run: the turn reached its token budget") {
			t.Errorf("the free call's result does not say why it did not run: %v", w.results(last))
		}
		if !strings.HasPrefix(ev.Text(), "Summary: uptime and df are fine") {
			t.Errorf("the thread reads %q; want the summary", ev.Text())
		}
		want := `
# HELP opsbot_llm_tokens_total Tokens the model providers reported, by kind: input (not from the prompt cache), cached (read from it), output.
# TYPE opsbot_llm_tokens_total counter
opsbot_llm_tokens_total{kind="cached"} 160
opsbot_llm_tokens_total{kind="input"} 240
opsbot_llm_tokens_total{kind="output"} 40
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "opsbot_llm_tokens_total"); err != nil {
			t.Error(err)
		}
	})
}

// A thread's day budget holds across turns and restarts, counted in the
// store, on both wire formats: once a thread spent it, its next turn
// makes no model call and says why; the next UTC day it may answer again.
func TestThreadDayBudgetHoldsAcrossTurns(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		f, p := w.model(t, costly(testfake.Say("One.")),
			costly(testfake.Use("c1", "", "run_command", run("web-1", "uptime"))), costly(testfake.Say("Two.")),
			costly(testfake.Say("Three, the next day.")))
		st, sess := testfake.Store(t)
		now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		st.Now = func() time.Time { return now }
		agentOf := func() *agent.Agent { // a fresh agent: as after a restart
			a := investigator(p, persist.History{Store: st}, &fleet{outputs: map[string]string{}})
			a.Budget.ThreadDay, a.Tokens = 300, persist.Tokens{Store: st}
			return a
		}
		for _, q := range []string{"one?", "two?"} {
			if err := agentOf().Turn(context.Background(), sess, q, (&testfake.Recorder{}).Emit); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		err := agentOf().Turn(context.Background(), sess, "three?", (&testfake.Recorder{}).Emit)
		var over *agent.BudgetError
		if !errors.As(err, &over) || over.Scope != agent.BudgetThreadDay || over.Used != 330 {
			t.Fatalf("err = %v; want the thread's day budget, 330 used", err)
		}
		if n := len(f.Requests()); n != 3 {
			t.Errorf("%d model calls; want 3 (none once the day's budget is spent)", n)
		}
		now = now.Add(14 * time.Hour) // 00:00 UTC the next day
		ev := &testfake.Recorder{}
		if err := agentOf().Turn(context.Background(), sess, "three?", ev.Emit); err != nil || ev.Text() != "Three, the next day." {
			t.Errorf("the next day: %q, %v; want an answer", ev.Text(), err)
		}
	})
}

// An alert investigation's turn is held to the alert budget, not the
// turn's: the helper that starts one sets SessionInfo.Kind.
func TestAlertBudgetBoundsAnAlertsTurn(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		_, p := w.model(t,
			costly(testfake.Use("c1", "", "run_command", run("web-1", "uptime"))),
			costly(testfake.Use("c2", "", "run_command", run("web-1", "df -h"))),
			costly(testfake.Say("Summary: up.")))
		h, sess := sqliteSession(t)
		sess.Kind = agent.KindAlert
		fl := &fleet{outputs: map[string]string{}}
		a := investigator(p, h, fl)
		a.Budget = agent.TokenBudget{Turn: 10_000, Alert: 200}
		ev := &testfake.Recorder{}
		err := a.Turn(context.Background(), sess, "alert: web-1 down", ev.Emit)
		var over *agent.BudgetError
		if !errors.As(err, &over) || over.Scope != agent.BudgetAlert || over.Limit != 200 {
			t.Fatalf("err = %v; want the alert budget of 200", err)
		}
		if n := len(fl.runs()); n != 1 || ev.Text() != "Summary: up." {
			t.Errorf("%d commands ran, thread %q; want 1 and the summary", n, ev.Text())
		}
	})
}
