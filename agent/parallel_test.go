package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
)

// meeting lets calls wait for each other: each that arrives blocks until
// n have arrived, or fails after a bound that turns a hang (calls run one
// after another) into a test failure. running counts the calls inside.
type meeting struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
	running int
	most    int // the most calls running at once
}

func newMeeting(n int) *meeting { return &meeting{n: n, all: make(chan struct{})} }

// enter records a call as running until leave.
func (m *meeting) enter() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running++
	m.most = max(m.most, m.running)
}

func (m *meeting) leave() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running--
}

// wait blocks until n calls arrived; false when the bound passed first.
func (m *meeting) wait(ctx context.Context) bool {
	m.mu.Lock()
	m.arrived++
	if m.arrived == m.n {
		close(m.all)
	}
	m.mu.Unlock()
	select {
	case <-m.all:
		return true
	case <-time.After(30 * time.Second):
		return false
	case <-ctx.Done():
		return false
	}
}

func (m *meeting) now() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

// Three slow reads in one response run at once: each blocks until all
// three have started, so run one after another the first would never
// return. Their results reach the model in the order it asked.
func TestIndependentCallsRunAtOnce(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		f, p := w.model(t,
			testfake.Use("c1", "", "run_command", run("web-1", "sleep a"), "run_command", run("web-2", "sleep b"), "run_command", run("web-3", "sleep c")),
			testfake.Say("Done."))
		m := newMeeting(3)
		fl := &fleet{outputs: map[string]string{"sleep a": "A\n", "sleep b": "B\n", "sleep c": "C\n"}, during: func(ctx context.Context, command string) {
			m.enter()
			defer m.leave()
			if !m.wait(ctx) {
				t.Errorf("%s waited 30s for the other calls: they do not run at once", command)
			}
		}}
		h, sess := sqliteSession(t)
		if err := investigator(p, h, fl).Turn(context.Background(), sess, "sleep thrice", (&testfake.Recorder{}).Emit); err != nil {
			t.Fatal(err)
		}
		if m.most != 3 {
			t.Errorf("at most %d calls ran at once; want 3", m.most)
		}
		results := w.results(f.Requests()[1].Body)
		if len(results) != 3 {
			t.Fatalf("results = %q", results)
		}
		for i, want := range []string{"A", "B", "C"} {
			if !strings.Contains(results[i], "\n"+want+"\n") {
				t.Errorf("result %d = %q; want %s's output (the model's order)", i, results[i], want)
			}
		}
	})
}

// A call that needs an approval runs alone and gets its one card: the
// reads before it run at once and are done when the card shows; the read
// after it starts once it ran.
func TestApprovalCallWaitsForItsCard(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		f, p := w.model(t,
			testfake.Use("c1", "", "run_command", run("web-1", "sleep a"), "run_command", run("web-1", "sleep b"),
				"run_command", run("web-1", "touch /tmp/x"), "run_command", run("web-1", "uptime")),
			testfake.Say("Done."))
		m := newMeeting(2)
		fl := &fleet{outputs: map[string]string{"uptime": "up\n"}, during: func(ctx context.Context, command string) {
			m.enter()
			defer m.leave()
			if strings.HasPrefix(command, "sleep") && !m.wait(ctx) {
				t.Errorf("%s waited 30s for the other sleep", command)
			}
		}}
		ap := approver{wait: func(context.Context) error {
			if n := m.now(); n != 0 {
				t.Errorf("%d calls run while the card waits; want none", n)
			}
			return nil
		}}
		guard := &approvals.Guard{Policy: riskyPolicy{risky: []string{"touch"}}, Approver: ap, Exec: fl}
		h, sess := sqliteSession(t)
		a := &agent.Agent{Provider: p, History: h, Tools: agent.NewRegistry(&tools.RunCommand{Guard: guard})}
		rec := &testfake.Recorder{}
		if err := a.Turn(context.Background(), sess, "go", rec.Emit); err != nil {
			t.Fatal(err)
		}
		if cards := rec.Kinds(agent.ApprovalPending); len(cards) != 1 || cards[0].Approval.Command != "touch /tmp/x" {
			t.Errorf("cards = %s; want one, for the touch", testfake.JSON(cards))
		}
		if ran := fmt.Sprint(fl.runs()[2:]); ran != "[web-1: touch /tmp/x web-1: uptime]" {
			t.Errorf("ran after the sleeps: %s; want the touch, then uptime", ran)
		}
		if m.most != 2 {
			t.Errorf("at most %d calls ran at once; want the 2 sleeps", m.most)
		}
		if results := w.results(f.Requests()[1].Body); len(results) != 4 || !strings.Contains(results[3], "up") {
			t.Errorf("results = %q", results)
		}
	})
}
