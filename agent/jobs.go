package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	cancels map[int64]context.CancelCauseFunc
	live    map[int64]*liveOutput // output so far of running jobs
	wg      sync.WaitGroup
	closed  bool
}

// Start records a job and runs it on one host, confined as a command that
// nobody approved (in the sandbox, no network); StartConfined takes the
// Guard's Permit.
func (j *Jobs) Start(sess SessionInfo, host, command string) (store.Job, error) {
	return j.StartConfined(context.Background(), sess, host, command, Confinement{})
}

// StartConfined records a job and runs it on one host, confined as the
// Guard's Permit said. The job outlives ctx, but keeps its values: the
// executor's audit trail names the person who asked, not the bot.
func (j *Jobs) StartConfined(ctx context.Context, sess SessionInfo, host, command string, c Confinement) (store.Job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return store.Job{}, fmt.Errorf("agent: jobs: shutting down")
	}
	job, err := j.Store.CreateJob(context.Background(), store.Job{SessionID: sess.ID, Host: host, Command: command, Requester: sess.Requester})
	if err != nil {
		return job, err
	}
	// The job's own deadline is the runner's (Timeout below); the cause
	// of a cancel says who ended it, for its notice.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if j.cancels == nil {
		j.cancels, j.live = map[int64]context.CancelCauseFunc{}, map[int64]*liveOutput{}
	}
	j.cancels[job.ID] = cancel
	j.live[job.ID] = &liveOutput{}
	j.wg.Go(func() { j.run(ctx, job, sess.Cwd, c) })
	return job, nil
}

// run runs a job in dir (the session's working directory, on the local
// host — the one its approval showed).
func (j *Jobs) run(ctx context.Context, job store.Job, dir string, c Confinement) {
	defer func() {
		j.mu.Lock()
		j.cancels[job.ID](nil)
		delete(j.cancels, job.ID)
		delete(j.live, job.ID)
		j.mu.Unlock()
	}()
	j.mu.Lock()
	live := j.live[job.ID]
	j.mu.Unlock()
	res := j.Exec.Exec(ctx, []string{job.Host}, job.Command, ExecOptions{Confinement: c, Timeout: orDefault(j.Timeout, time.Hour), Dir: dir,
		OnOutput: func(_ string, _ bool, data []byte) { live.write(data) }})[0]
	state, code := store.JobSucceeded, &res.ExitCode
	switch {
	case ctx.Err() != nil:
		state, code = store.JobCancelled, nil
	case res.Err != nil:
		state, code = store.JobFailed, nil
	case res.ExitCode != 0 || res.Killed:
		state = store.JobFailed
	}
	// Head and tail: the first error and the summary at the end.
	tail := headTail(res.Stdout+res.Stderr, jobOutputKept)
	if res.Err != nil {
		tail = res.Err.Error()
	}
	note := fmt.Sprintf("job %d (`%s` on %s) %s: %s", job.ID, job.Command, job.Host, state, status(res))
	switch {
	case state == store.JobCancelled:
		// The notice says what the store says, and why: not "failed:
		// … context canceled".
		note = fmt.Sprintf("job %d (`%s` on %s) was cancelled: %s", job.ID, job.Command, job.Host, context.Cause(ctx))
	case res.Err != nil:
		note = fmt.Sprintf("job %d (`%s` on %s) failed: %v", job.ID, job.Command, job.Host, res.Err)
	}
	// The end of a job must be recorded even while the process shuts down.
	j.Store.FinishJob(context.WithoutCancel(ctx), job.ID, state, code, tail, note)
}

// Partial is the head and tail of what a running job printed so far; ok
// is false when the job is not running here.
func (j *Jobs) Partial(id int64) (out string, ok bool) {
	j.mu.Lock()
	live := j.live[id]
	j.mu.Unlock()
	if live == nil {
		return "", false
	}
	return live.String(), true
}

// liveOutput keeps the head and the tail of a running job's output.
type liveOutput struct {
	mu         sync.Mutex
	head, tail []byte
	cut        int // bytes dropped between head and tail
}

func (l *liveOutput) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	half := jobOutputKept / 2
	if n := min(half-len(l.head), len(p)); n > 0 {
		l.head, p = append(l.head, p[:n]...), p[n:]
	}
	l.tail = append(l.tail, p...)
	if over := len(l.tail) - half; over > 0 {
		l.tail, l.cut = append(l.tail[:0:0], l.tail[over:]...), l.cut+over
	}
}

func (l *liveOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut == 0 {
		return strings.ToValidUTF8(string(l.head)+string(l.tail), "")
	}
	return strings.ToValidUTF8(fmt.Sprintf("%s\n[… %d bytes cut here …]\n%s", l.head, l.cut, l.tail), "")
}

// Why a job was cancelled, as its notice says it.
var (
	errCancelledOnRequest = errors.New("stopped on request")
	errJobsShutDown       = errors.New("opsbot was shutting down (it is not re-run)")
)

// Cancel stops a running job; it reports whether one was running.
func (j *Jobs) Cancel(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	cancel, ok := j.cancels[id]
	if ok {
		cancel(errCancelledOnRequest)
	}
	return ok
}

// Close cancels every running job and waits for their ends to be recorded.
// Safe to call twice.
func (j *Jobs) Close() {
	j.mu.Lock()
	j.closed = true
	for _, cancel := range j.cancels {
		cancel(errJobsShutDown)
	}
	j.mu.Unlock()
	j.wg.Wait()
}

// jobOutputKept is how much of a job's output is kept: its head and its
// tail, half each.
const jobOutputKept = 8000

// JobEndPrompt is the message of the short turn a finished job starts in
// its thread (agent.on_job_end: turn): the job's outcome and the head and
// tail of its output, labelled as opsbot's, so the model answers what the
// job's end means rather than taking it for the person's words.
func JobEndPrompt(j store.Job) string {
	return "[opsbot note, not the person's words] A background job in this conversation ended. Tell the thread in a few " +
		"sentences what it means: what finished, what failed or was skipped (quote the output), and what, if anything, " +
		"to do next. Do not start it again unless asked.\n<job>\n" + unframe(FormatJob(j)) + "\n</job>"
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
	// A job runs on one host: a group is refused before anyone is asked
	// to approve it, so that no approval is used up for nothing.
	if hosts, err := t.Guard.Exec.Resolve(in.Target); err != nil {
		return refusal(&errRefused{err.Error()})
	} else if len(hosts) != 1 {
		return Errorf("a job runs on one host; %q is %d hosts: start one job per host, or use run_command for a quick command across the group", in.Target, len(hosts))
	}
	permit, err := t.Guard.Permit(ctx, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	job, err := t.Jobs.StartConfined(ctx, call.Session, permit.Hosts[0], in.Command, permit.Confinement)
	if err != nil {
		return Errorf("could not start the job: %v", err)
	}
	return ToolResult{Content: fmt.Sprintf("job %d started on %s; you will be notified when it ends", job.ID, job.Host),
		Summary: fmt.Sprintf("job %d started", job.ID)}
}

// JobStatusTool is `job_status`.
type JobStatusTool struct {
	Store *store.Store
	// Jobs, when set, shows a running job's output so far.
	Jobs *Jobs
}

// Spec describes the tool.
func (*JobStatusTool) Spec() ToolSpec {
	return ToolSpec{Name: "job_status", Description: "The state, exit code and output (head and tail) of a background job of this conversation; while it runs, its output so far.",
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
	content := FormatJob(job)
	if partial, ok := t.Jobs.partial(job); ok {
		content += "\noutput so far:\n<output host=" + strconv.Quote(job.Host) + " command=" + strconv.Quote(job.Command) + ">\n" +
			unframe(partial) + "\n</output>"
	}
	return ToolResult{Content: content, Summary: fmt.Sprintf("job %d: %s", job.ID, job.State)}
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

// partial is a running job's output so far, when j knows it.
func (j *Jobs) partial(job store.Job) (string, bool) {
	if j == nil || job.State != store.JobRunning {
		return "", false
	}
	return j.Partial(job.ID)
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
