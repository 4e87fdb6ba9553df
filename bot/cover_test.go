package bot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// A budget more generous than the platform: the platform's 429s carry a
// Retry-After, which pushes every later slot back (the penalty), and the
// answer still ends whole.
func TestRendererTakesThePlatformsRetryAfter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: 10})
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(600), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		var want strings.Builder
		for i := range 120 {
			d := fmt.Sprintf("w%d ", i)
			r.Write(d)
			want.WriteString(d)
			time.Sleep(time.Second)
		}
		r.Close(context.Background(), nil)
		if got := shown(conn, "T1"); got != want.String() {
			t.Errorf("shows %d of %d bytes", len(got), want.Len())
		}
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if conn.limited == 0 || conn.limited > 5 {
			t.Errorf("%d requests refused; want a few, each followed by the wait it asked for", conn.limited)
		}
	})
}

func TestFitKeepsTheFirstButtons(t *testing.T) {
	t.Parallel()
	m := connectors.Message{Buttons: []connectors.Button{{ActionID: "a"}, {ActionID: "b"}, {ActionID: "c"}}}
	if got := fit(m, connectors.Limits{MaxButtons: 2}); len(got.Buttons) != 2 || got.Buttons[0].ActionID != "a" {
		t.Errorf("fit to 2 buttons: %+v", got.Buttons)
	}
	if got := fit(m, connectors.Limits{}); len(got.Buttons) != 3 {
		t.Errorf("no limit: %d buttons", len(got.Buttons))
	}
	if len(m.Buttons) != 3 {
		t.Error("fit changed its argument")
	}
}

// cardlessConn refuses every message with buttons (a card).
type cardlessConn struct{ *fakeConn }

func (c cardlessConn) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	if len(m.Buttons) > 0 && m.Buttons[0].ActionID == ActionApprove {
		return connectors.Ref{}, errors.New("invalid_blocks")
	}
	return c.fakeConn.Post(ctx, d, m)
}

// Nobody can approve a card they cannot see: a card the platform refuses
// denies its request, and the thread says why the command did not run.
func TestACardThatCannotBePostedDenies(t *testing.T) {
	t.Parallel()
	conn := cardlessConn{newFakeConn(webLimits)}
	conn.name = "web"
	dir := t.TempDir()
	b, stop := startBot(t, dir, conn, botOptions{})
	t.Cleanup(stop)
	h := &harness{t: t, bot: b, conn: conn.fakeConn, st: storeOf(b), dir: dir, stop: stop}
	target := filepath.Join(dir, "never")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the refusal", h.has("t1", "its approval card could not be posted"))
	if _, err := os.Stat(target); err == nil {
		t.Error("the command ran without a card")
	}
}

// With a quorum of two, the first approval is counted and said so; a
// second click by the same person is not counted again.
func TestQuorumVotesAreCountedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{Quorum: 2}, nil)
	target := filepath.Join(h.dir, "by-two")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the card", h.has("t1", "Approval needed"))
	card, ref, _ := h.find("t1", "Approval needed")
	if said := h.click("bob", card, ref, ActionApprove); said != "Your approval is counted: 1 of 2 needed." {
		t.Errorf("first approval: %q", said)
	}
	if said := h.click("bob", card, ref, ActionApprove); !strings.Contains(said, "already voted") {
		t.Errorf("second click by bob: %q", said)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("ran on one approval of two")
	}
}

// How a `run` ends, in words, for one host and for many.
func TestRunSummaries(t *testing.T) {
	t.Parallel()
	spec := runSpec{Target: "group:web", Command: "uptime", Timeout: time.Minute}
	cases := []struct {
		results []hosts.ExecResult
		want    string
	}{
		{[]hosts.ExecResult{{Host: "web-1", ExitCode: 0, Duration: 3 * time.Millisecond}}, "✓ `uptime` on web-1: exit 0 in 3ms"},
		{[]hosts.ExecResult{{Host: "web-1", ExitCode: 2}}, "✗ `uptime` on web-1: exit 2"},
		{[]hosts.ExecResult{{Host: "web-1", Killed: true}}, "stopped at its deadline of 1m0s"},
		{[]hosts.ExecResult{{Host: "web-1", Err: errors.New("unknown host")}}, "✗ `uptime` on web-1: could not run"},
		{[]hosts.ExecResult{{Host: "web-1"}, {Host: "web-2", ExitCode: 1}, {Host: "web-3", Killed: true}}, "`uptime` on group:web: 3 hosts, 2 failed"},
	}
	for _, c := range cases {
		if got := summarize(spec, c.results); !strings.Contains(got, c.want) {
			t.Errorf("summarize = %q; want %q in it", got, c.want)
		}
	}
	if got := prefixLines("web-1", "a\nb\n"); got != "web-1: a\nweb-1: b\n" {
		t.Errorf("prefixLines = %q", got)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(approvals.StoppedBy{Name: "bob"})
	if got := stopReason(ctx); got != "stopped by @bob" {
		t.Errorf("stopReason = %q", got)
	}
	ctx, cancel = context.WithCancelCause(context.Background())
	cancel(agent.ErrShutdown)
	if got := stopReason(ctx); !strings.Contains(got, "restarted") {
		t.Errorf("stopReason at shutdown = %q", got)
	}
	if capitalize("") != "" || capitalize("approved") != "Approved" {
		t.Error("capitalize")
	}
}

// The renderer's answer so far, and the budget's count of streams.
func TestRendererTextAndBudgetStreams(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(webLimits)
		budget := render.NewEditBudget(50)
		r := render.NewRenderer(t.Context(), conn, budget, nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		r.Write("partial")
		if r.Text() != "partial" || budget.Streams() != 1 {
			t.Errorf("text %q, %d streams", r.Text(), budget.Streams())
		}
		r.Close(context.Background(), nil)
		if budget.Streams() != 0 {
			t.Errorf("%d streams after Close", budget.Streams())
		}
	})
}

// Every message the bot sends passes its platform's MaxButtons, the
// renderer's streamed answers too, not only posted cards.
func TestEveryMessageKeepsToMaxButtons(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000, MaxButtons: 1})
	c, _ := NewPlatforms(nil, nil, conn).conn("fake")
	r := render.NewRenderer(t.Context(), c, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"},
		connectors.Button{ActionID: ActionStop, Label: "Stop"}, connectors.Button{ActionID: "more", Label: "More"})
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	changed := conn.changes()
	r.Write("checking the disks")
	for len(conn.thread("T1")) == 0 { // the answer shows while it is written, with its Stop
		select {
		case <-changed:
			changed = conn.changes()
		case <-guard.C:
			t.Fatalf("the answer being written was not shown; %d requests refused", conn.tooLong)
		}
	}
	if m := conn.thread("T1")[0]; len(m.msg.Buttons) != 1 || m.msg.Buttons[0].ActionID != ActionStop {
		t.Errorf("the answer being written shows buttons %+v; want its Stop alone", m.msg.Buttons)
	}
	r.Close(t.Context(), nil)
}

// Where the platform keeps every status line in view (a terminal), a
// "running…" line is not replaced by its result: both show, however fast
// the command was.
func TestStatusLinesKeptWhereThePlatformKeepsThem(t *testing.T) {
	t.Parallel()
	for _, keeps := range []bool{false, true} {
		conn := newFakeConn(connectors.Limits{MaxText: 4000, KeepsStatus: keeps})
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		r.Status("running `df -h` on local…", false)
		r.Status("✓ `df -h` on local: exit 0", true)
		r.Close(t.Context(), nil)
		want := "✓ `df -h` on local: exit 0"
		if keeps {
			want = "running `df -h` on local…\n" + want
		}
		if msgs := conn.thread("T1"); len(msgs) != 1 || msgs[0].msg.Context != want {
			t.Errorf("KeepsStatus %v: the answer shows %+v; want context %q", keeps, msgs, want)
		}
	}
}
