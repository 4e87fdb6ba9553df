package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/opsbot/opsbot/store"
)

// Jobs runs long commands in the background. A job is a row in the store;
// when it ends, the store writes the notification that the thread and the
// agent will see. Jobs outlive the turn that started them, not the process:
// a job found running at start-up is marked interrupted, never re-run.
type Jobs struct {
	Store *store.Store
	Exec  Executor
	// Timeout bounds one job (default 1h).
	Timeout time.Duration

	mu      sync.Mutex
	cancels map[int64]context.CancelFunc
	wg      sync.WaitGroup
	closed  bool
}

// Start records a job and runs it; the job runs on one host, confined as
// the Guard's Permit said.
func (j *Jobs) Start(sess SessionInfo, host, command string, c Confinement) (store.Job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return store.Job{}, fmt.Errorf("agent: jobs: shutting down")
	}
	job, err := j.Store.CreateJob(context.Background(), store.Job{SessionID: sess.ID, Host: host, Command: command, Requester: sess.Requester})
	if err != nil {
		return job, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), orDefault(j.Timeout, time.Hour))
	if j.cancels == nil {
		j.cancels = map[int64]context.CancelFunc{}
	}
	j.cancels[job.ID] = cancel
	j.wg.Go(func() { j.run(ctx, job, sess.Cwd, c) })
	return job, nil
}

// run runs a job in dir (the session's working directory, on the local
// host — the one its approval showed).
func (j *Jobs) run(ctx context.Context, job store.Job, dir string, c Confinement) {
	defer func() {
		j.mu.Lock()
		j.cancels[job.ID]()
		delete(j.cancels, job.ID)
		j.mu.Unlock()
	}()
	res := j.Exec.Exec(ctx, []string{job.Host}, job.Command, ExecOptions{Confinement: c, Timeout: orDefault(j.Timeout, time.Hour), Dir: dir})[0]
	state, code := store.JobSucceeded, &res.ExitCode
	switch {
	case ctx.Err() == context.Canceled:
		state, code = store.JobCancelled, nil
	case res.Err != nil:
		state, code = store.JobFailed, nil
	case res.ExitCode != 0 || res.Killed:
		state = store.JobFailed
	}
	tail := tailOf(res.Stdout+res.Stderr, 4000)
	if res.Err != nil {
		tail = res.Err.Error()
	}
	note := fmt.Sprintf("job %d (`%s` on %s) %s: %s", job.ID, job.Command, job.Host, state, status(res))
	if res.Err != nil {
		note = fmt.Sprintf("job %d (`%s` on %s) failed: %v", job.ID, job.Command, job.Host, res.Err)
	}
	// The end of a job must be recorded even while the process shuts down.
	j.Store.FinishJob(context.WithoutCancel(ctx), job.ID, state, code, tail, note)
}

// Cancel stops a running job; it reports whether one was running.
func (j *Jobs) Cancel(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	cancel, ok := j.cancels[id]
	if ok {
		cancel()
	}
	return ok
}

// Close cancels every running job and waits for their ends to be recorded.
// Safe to call twice.
func (j *Jobs) Close() {
	j.mu.Lock()
	j.closed = true
	for _, cancel := range j.cancels {
		cancel()
	}
	j.mu.Unlock()
	j.wg.Wait()
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// StartJobTool is `start_job`: a long command in the background, through
// the same guard as run_command.
type StartJobTool struct {
	Guard *Guard
	Jobs  *Jobs
}

// Spec describes the tool.
func (*StartJobTool) Spec() ToolSpec {
	return ToolSpec{Name: "start_job", Description: "Start a long-running command in the background on one host; you are notified when it ends. Use job_status to look at it meanwhile. Same approval rules as run_command.",
		InputSchema: schema(`{"type":"object","properties":{"target":{"type":"string","description":"one host"},"command":{"type":"string"}},"required":["target","command"]}`)}
}

// Describe is the status line.
func (*StartJobTool) Describe(call ToolCall) string {
	var in runCommandInput
	json.Unmarshal(call.Input, &in)
	return fmt.Sprintf("starting job `%s` on %s…", in.Command, in.Target)
}

// Call authorizes and starts the job.
func (t *StartJobTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	permit, err := t.Guard.Permit(ctx, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	if len(permit.Hosts) != 1 {
		return Errorf("a job runs on one host; %q is %d hosts", in.Target, len(permit.Hosts))
	}
	job, err := t.Jobs.Start(call.Session, permit.Hosts[0], in.Command, permit.Confinement)
	if err != nil {
		return Errorf("could not start the job: %v", err)
	}
	return ToolResult{Content: fmt.Sprintf("job %d started on %s; you will be notified when it ends", job.ID, job.Host),
		Summary: fmt.Sprintf("job %d started", job.ID)}
}

// JobStatusTool is `job_status`.
type JobStatusTool struct{ Store *store.Store }

// Spec describes the tool.
func (*JobStatusTool) Spec() ToolSpec {
	return ToolSpec{Name: "job_status", Description: "The state, exit code and output tail of a background job.",
		InputSchema: schema(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)}
}

// Call reads the job.
func (t *JobStatusTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in struct {
		ID int64 `json:"id"`
	}
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	job, err := t.Store.Job(ctx, in.ID)
	if err != nil {
		return Errorf("no job %d", in.ID)
	}
	if job.SessionID != call.Session.ID {
		return Errorf("job %d belongs to another conversation", in.ID)
	}
	return ToolResult{Content: FormatJob(job), Summary: fmt.Sprintf("job %d: %s", job.ID, job.State)}
}

// FormatJob renders a job for the model or a person.
func FormatJob(j store.Job) string {
	s := fmt.Sprintf("job %d: `%s` on %s — %s", j.ID, j.Command, j.Host, j.State)
	if j.ExitCode != nil {
		s += fmt.Sprintf(", exit %d", *j.ExitCode)
	}
	if !j.EndedAt.IsZero() {
		s += fmt.Sprintf(", took %s", j.EndedAt.Sub(j.StartedAt).Round(time.Millisecond))
	}
	if j.OutputTail != "" {
		s += "\n" + j.OutputTail
	}
	return s
}

// StoreNotices adapts the store's notification queue for the loop.
type StoreNotices struct{ Store *store.Store }

var _ Notices = StoreNotices{}

// Pending lists what the session's agent has not seen.
func (n StoreNotices) Pending(ctx context.Context, sessionID int64) ([]Notification, error) {
	rows, err := n.Store.UninjectedNotifications(ctx, sessionID)
	out := make([]Notification, len(rows))
	for i, r := range rows {
		out[i] = Notification{ID: r.ID, Text: r.Text}
	}
	return out, err
}

// MarkInjected records that the agent saw them.
func (n StoreNotices) MarkInjected(ctx context.Context, ids ...int64) error {
	_, err := n.Store.MarkInjected(ctx, ids...)
	return err
}
