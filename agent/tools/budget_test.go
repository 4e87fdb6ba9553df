package tools

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// clockExec is an Executor for synctest bubbles: "sleep N" waits N
// seconds of the bubble's clock (or until cancelled), anything else
// returns at once.
type clockExec struct {
	mu  sync.Mutex
	ran []string
}

func (e *clockExec) Resolve(target string) ([]string, error) { return strings.Split(target, ","), nil }

func (e *clockExec) Exec(ctx context.Context, names []string, command string, _ hosts.ExecOptions) []hosts.ExecResult {
	e.mu.Lock()
	e.ran = append(e.ran, command)
	e.mu.Unlock()
	r := hosts.ExecResult{Host: names[0], Stdout: "ok\n"}
	if command == "sleep 30" {
		select {
		case <-time.After(30 * time.Second):
		case <-ctx.Done():
			r.Killed, r.ExitCode, r.Signal = true, -1, "KILL"
		}
	}
	return []hosts.ExecResult{r}
}

// slowApprover approves after wait on the bubble's clock.
type slowApprover struct{ wait time.Duration }

func (s slowApprover) Approve(ctx context.Context, req approvals.CommandRequest, pending func(approvals.Pending)) (approvals.Outcome, error) {
	pending(approvals.Pending{ID: "ap1", Target: req.Target, Command: req.Command, ExpiresAt: time.Now().Add(15 * time.Minute)})
	select {
	case <-time.After(s.wait):
		return approvals.Outcome{Approved: true, State: "approved", DecidedBy: "bob"}, nil
	case <-ctx.Done():
		return approvals.Outcome{State: "withdrawn"}, ctx.Err()
	}
}

func guarded(ex hosts.Executor, ap approvals.Approver) *agent.Registry {
	pol := fakePolicy{"uptime": policy.Allow, "sleep 30": policy.Allow, "touch /tmp/x": policy.Approve}
	return agent.NewRegistry(&RunCommand{Guard: &approvals.Guard{Policy: pol, Approver: ap, Exec: ex}})
}

// An approval decided after 14 minutes still runs its command: time spent
// waiting for people does not count against the 10-minute turn, so the
// card's "expires in 15 minutes" holds.
func TestFourteenMinuteApprovalStillRuns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ex := &clockExec{}
		model := &testfake.Model{Steps: []testfake.Step{
			testfake.Calls("", "run_command", `{"target":"web-1","command":"touch /tmp/x"}`),
			testfake.Text("Done."),
		}}
		a := &agent.Agent{Provider: model, Tools: guarded(ex, slowApprover{14 * time.Minute}), History: agent.NewMemoryHistory(), TurnTimeout: 10 * time.Minute}
		start := time.Now()
		if err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "touch it", (&testfake.Recorder{}).Emit); err != nil {
			t.Fatalf("the turn failed after %v: %v", time.Since(start), err)
		}
		if len(ex.ran) != 1 || ex.ran[0] != "touch /tmp/x" {
			t.Errorf("ran %q; want the approved touch", ex.ran)
		}
	})
}

// The turn's own time still runs out while the agent works.
func TestTurnBudgetCountsWorkNotApprovals(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		model := &testfake.Model{Steps: []testfake.Step{
			testfake.Calls("", "run_command", `{"target":"web-1","command":"touch /tmp/x"}`),
			testfake.Calls("", "run_command", `{"target":"web-1","command":"sleep 30"}`),
		}}
		a := &agent.Agent{Provider: model, Tools: guarded(&clockExec{}, slowApprover{5 * time.Minute}), History: agent.NewMemoryHistory(), TurnTimeout: 20 * time.Second}
		start := time.Now()
		err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "go", (&testfake.Recorder{}).Emit)
		if err == nil || !strings.Contains(err.Error(), "time limit") {
			t.Fatalf("err = %v; want the time limit", err)
		}
		if d := time.Since(start); d != 5*time.Minute+20*time.Second {
			t.Errorf("the turn ended after %v; want 5m of approval plus its 20s", d)
		}
	})
}

// When the time limit cuts a response's calls, each call's result says
// exactly what happened: the approved touch that ran reports its exit, the
// sleep that was running says so, the uptime that ran beside it reports
// its exit, the touch after them (which would ask people, so waits for
// the calls before it) never started.
func TestDeadlineSaysWhatHappenedToEachCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := agent.NewMemoryHistory()
		model := &testfake.Model{Steps: []testfake.Step{
			testfake.Calls("", "run_command", `{"target":"web-1","command":"touch /tmp/x"}`,
				"run_command", `{"target":"web-1","command":"sleep 30"}`,
				"run_command", `{"target":"web-1","command":"uptime"}`,
				"run_command", `{"target":"web-1","command":"touch /tmp/x"}`),
			testfake.Text("The touch ran; the sleep was cut."), // the answer after the deadline
		}}
		a := &agent.Agent{Provider: model, Tools: guarded(&clockExec{}, slowApprover{}), History: h, TurnTimeout: 10 * time.Second}
		if err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "go", (&testfake.Recorder{}).Emit); err == nil {
			t.Fatal("no error")
		}
		msgs := testfake.Load(t, h, 1)
		res := msgs[len(msgs)-2].Content // then the answer after the deadline
		if len(res) != 4 {
			t.Fatalf("results = %s", testfake.JSON(res))
		}
		for i, want := range []string{"exit 0", "interrupted", "exit 0", "not run"} {
			if !strings.Contains(res[i].Content, want) {
				t.Errorf("result %d = %q; want it to say %q", i+1, res[i].Content, want)
			}
		}
		if strings.Contains(res[0].Content, "not run") {
			t.Errorf("the touch that ran is reported as not run: %q", res[0].Content)
		}
	})
}

// start_job refuses a group before asking anyone: an approval is not used
// up for a job that cannot start.
func TestStartJobRefusesAGroupBeforeAsking(t *testing.T) {
	t.Parallel()
	ap := &fakeApprover{answer: approvals.Outcome{Approved: true, State: "approved"}}
	tool := &StartJob{Guard: &approvals.Guard{Policy: fakePolicy{}, Approver: ap, Exec: &shellExec{}}}
	res := tool.Call(context.Background(), agent.ToolCall{Name: "start_job", Emit: func(agent.Event) {},
		Input: []byte(`{"target":"web-1,web-2","command":"pg_dump app"}`)})
	if !res.IsError || !strings.Contains(res.Content, "one host") {
		t.Errorf("result = %+v", res)
	}
	if len(ap.request) != 0 {
		t.Errorf("an approval was asked for a job that cannot start: %+v", ap.request)
	}
}

// printingExec prints a line, closes printed, then holds the command
// until release.
type printingExec struct {
	release, printed chan struct{}
}

func (e *printingExec) Resolve(target string) ([]string, error) { return []string{target}, nil }

func (e *printingExec) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	opts.OnOutput(names[0], false, []byte("dumped users\n"))
	close(e.printed)
	select {
	case <-e.release:
	case <-ctx.Done():
	}
	return []hosts.ExecResult{{Host: names[0], Stdout: "dumped users\ndone\n"}}
}

// job_status shows what a running job printed so far.
func TestJobStatusShowsPartialOutput(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	ex := &printingExec{release: make(chan struct{}), printed: make(chan struct{})}
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: ex}
	defer jobs.Close()
	job, err := startJob(jobs, sess, "pg_dump app")
	if err != nil {
		t.Fatal(err)
	}
	tool := &JobStatus{Store: st, Jobs: jobs}
	<-ex.printed
	res := tool.Call(context.Background(), agent.ToolCall{Name: "job_status", Session: sess, Input: []byte(`{"id":` + strconv.Itoa(int(job.ID)) + `}`)})
	close(ex.release)
	if res.IsError || !strings.Contains(res.Content, "running") || !strings.Contains(res.Content, "dumped users") {
		t.Errorf("status = %q", res.Content)
	}
}
