package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
)

// router is a scripted model that answers by what a request holds, since
// the requests of subagents that run at once come in any order: the
// parent delegates "check A" and "check B"; each subagent runs a sleep
// and a touch, then answers.
func (w wire) router() testfake.Reply {
	return testfake.Reply{Build: func(body map[string]any) []byte {
		texts, results := w.userTexts(body), w.results(body)
		switch {
		case len(texts) > 0 && texts[0] == "investigate" && len(results) == 0:
			return w.sse(testfake.Use("p", "", "task", `{"prompt":"check A"}`, "task", `{"prompt":"check B"}`))
		case len(texts) > 0 && texts[0] == "investigate":
			return w.sse(testfake.Say("both: " + strings.Join(results, " | ")))
		case len(texts) > 0 && len(results) == 0:
			x := strings.TrimPrefix(texts[0], "check ")
			return w.sse(testfake.Use("s"+x, "", "run_command", run("web-1", "sleep "+x), "run_command", run("web-1", "touch "+x)))
		case len(texts) > 0:
			return w.sse(testfake.Say("sub " + strings.TrimPrefix(texts[0], "check ") + " done"))
		}
		return w.sse(testfake.Say("lost"))
	}}
}

// Two subagents of one step work at once (each one's sleep waits for the
// other's), and their approvals still come one card at a time: the second
// card shows only once the first is decided.
func TestSubagentsRunAtOnceWithOneCardAtATime(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		replies := make([]testfake.Reply, 6)
		for i := range replies {
			replies[i] = w.router()
		}
		_, p := w.modelReplies(t, replies...)
		m := newMeeting(2)
		fl := &fleet{outputs: map[string]string{}, during: func(ctx context.Context, command string) {
			if strings.HasPrefix(command, "sleep") && !m.wait(ctx) {
				t.Errorf("%s waited 30s for the other subagent's sleep: subagents do not run at once", command)
			}
		}}
		rec := &testfake.Recorder{}
		both := touchesStarted(rec)
		var mu sync.Mutex
		asking := 0
		ap := approver{wait: func(ctx context.Context) error {
			mu.Lock()
			asking++
			if asking > 1 {
				t.Error("two approvals wait at once")
			}
			mu.Unlock()
			defer func() { mu.Lock(); asking--; mu.Unlock() }()
			select { // hold the first card until the other touch has started too
			case <-both:
			case <-time.After(30 * time.Second):
				t.Error("the other subagent's touch never started")
			}
			return nil
		}}
		guard := &approvals.Guard{Policy: riskyPolicy{risky: []string{"touch"}}, Approver: ap, Exec: fl}
		h, sess := sqliteSession(t)
		a := &agent.Agent{Provider: p, History: h, Tools: agent.NewRegistry(&tools.RunCommand{Guard: guard})}
		a.Tools.Add(&tools.Task{Parent: a})
		if err := a.Turn(context.Background(), sess, "investigate", rec.Emit); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rec.Text(), "sub A done") || !strings.Contains(rec.Text(), "sub B done") {
			t.Errorf("answer = %q", rec.Text())
		}
		if order := cardOrder(rec); order != "card approved card approved" {
			t.Errorf("cards and decisions came as %q; want one card at a time", order)
		}
	})
}

// touchesStarted is closed once both subagents' touch calls started.
func touchesStarted(rec *testfake.Recorder) <-chan struct{} {
	both := make(chan struct{})
	var once sync.Once
	n := 0
	rec.On = func(ev agent.Event) {
		if ev.Kind == agent.ToolStarted && strings.HasPrefix(ev.Summary, "running `touch") {
			if n++; n == 2 {
				once.Do(func() { close(both) })
			}
		}
	}
	return both
}

// cardOrder is the approval cards and the approved runs, in order.
func cardOrder(rec *testfake.Recorder) string {
	var out []string
	for _, ev := range rec.Events {
		switch {
		case ev.Kind == agent.ApprovalPending:
			out = append(out, "card")
		case ev.Kind == agent.ToolStarted && strings.HasPrefix(ev.Summary, "approved:"):
			out = append(out, "approved")
		}
	}
	return strings.Join(out, " ")
}
