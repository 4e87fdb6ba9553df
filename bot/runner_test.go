package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// fakeTurns shows a run's stream on a fake platform and keeps the error
// a refused run ended with.
type fakeTurns struct {
	*fakeOut
	mu      sync.Mutex
	refused []error
}

func (f *fakeTurns) renderer(ctx context.Context, ev connectors.Event, _ bool) (*render.Renderer, func()) {
	r := render.NewRenderer(ctx, f.c, render.NewEditBudget(0), nil, nil, destOf(ev))
	return r, func() { r.Close(context.Background(), nil) }
}
func (f *fakeTurns) emitter(context.Context, connectors.Event, agent.SessionInfo, *render.Renderer, *runSpec, *ranList) func(agent.Event) {
	return func(agent.Event) {}
}
func (f *fakeTurns) closeRefused(ctx context.Context, _ connectors.Event, r *render.Renderer, err error) {
	f.mu.Lock()
	f.refused = append(f.refused, err)
	f.mu.Unlock()
	r.Close(ctx, err)
}

// permitFunc answers every Permit alike.
type permitFunc func(target string) (approvals.Permit, error)

func (p permitFunc) Permit(_ context.Context, req approvals.CommandRequest, _ func(approvals.Pending)) (approvals.Permit, error) {
	return p(req.Target)
}

// jobStarterFunc starts (or fails to start) every job alike.
type jobStarterFunc func(host string) (hosts.Job, error)

func (j jobStarterFunc) Start(_ context.Context, job hosts.Job, _ string, _ hosts.Confinement) (hosts.Job, error) {
	return j(job.Host)
}

// execFunc runs every command alike.
type execFunc func(names []string, opts hosts.ExecOptions) []hosts.ExecResult

func (e execFunc) Exec(_ context.Context, names []string, _ string, opts hosts.ExecOptions) []hosts.ExecResult {
	return e(names, opts)
}

func newFakeRunner(conn *fakeConn) (*runner, *fakeTurns) {
	turns := &fakeTurns{fakeOut: &fakeOut{c: conn}}
	return &runner{turns: turns, refreshCards: func(context.Context, connectors.Event) {}, log: logTo(&strings.Builder{}),
		guard: permitFunc(func(target string) (approvals.Permit, error) {
			return approvals.Permit{Hosts: strings.Split(target, ",")}, nil
		})}, turns
}

// `run` over fakes: its output and how it ended show in the thread; a
// background run where jobs are off, or whose job rows cannot be written,
// says so per host and runs nothing; a refused run ends as refused.
func TestRunnerOverFakes(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	sess := agent.SessionInfo{ID: 1}
	ev := func(thread string) connectors.Event {
		return connectors.Event{Platform: "fake", Channel: "C1", Thread: thread}
	}
	last := func(thread string) string {
		m := conn.thread(thread)
		if len(m) == 0 {
			return ""
		}
		return m[len(m)-1].msg.Text + "\n" + m[len(m)-1].msg.Context
	}

	rn, _ := newFakeRunner(conn)
	rn.timeout = 42 * time.Second
	rn.exec = execFunc(func(names []string, opts hosts.ExecOptions) []hosts.ExecResult {
		if opts.Timeout != 42*time.Second {
			t.Errorf("a run without --timeout ran with %v; want the configured 42s", opts.Timeout)
		}
		opts.OnOutput(names[0], false, []byte("up 3 days\n"))
		return []hosts.ExecResult{{Host: names[0], ExitCode: 0}}
	}).Exec
	rn.command(t.Context(), ev("fg"), sess, "web-1 uptime")
	if got := last("fg"); !strings.Contains(got, "up 3 days") || !strings.Contains(got, "✓ `uptime` on web-1: exit 0") {
		t.Errorf("the run shows %q", got)
	}

	rn.command(t.Context(), ev("off"), sess, "--bg web-1,web-2 pg_dump app")
	if got := last("off"); strings.Count(got, "background jobs are off here") != 2 {
		t.Errorf("with jobs off the thread reads %q", got)
	}

	rn.startJob = jobStarterFunc(func(host string) (hosts.Job, error) {
		if host == "web-2" {
			return hosts.Job{}, fmt.Errorf("start: %w", &store.Unavailable{Reason: "the disk is full"})
		}
		return hosts.Job{ID: 7}, nil
	}).Start
	rn.command(t.Context(), ev("bg"), sess, "--bg web-1,web-2 pg_dump app")
	got := last("bg")
	if !strings.Contains(got, "job 7 started") || !strings.Contains(got, "web-2: the job could not start") || !strings.Contains(got, "the disk is full") {
		t.Errorf("a job whose row cannot be written: %q", got)
	}

	rn, turns := newFakeRunner(conn)
	rn.guard = permitFunc(func(string) (approvals.Permit, error) {
		return approvals.Permit{}, errors.New("denied: rm -rf is never run")
	})
	rn.command(t.Context(), ev("no"), sess, "web-1 rm -rf /")
	if len(turns.refused) != 1 || !strings.Contains(last("no"), "rm -rf is never run") {
		t.Errorf("a refused run ended with %v, showing %q", turns.refused, last("no"))
	}
	rn.command(t.Context(), ev("usage"), sess, "--bg web-1")
	if said := turns.said(); len(said) != 1 || !strings.Contains(said[0], "Usage: `run") {
		t.Errorf("a run it cannot read was answered %q", said)
	}
}
