package hosts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// JobStore records background jobs; the store's Jobs sub-store is one.
// FinishJob writes, in the same transaction, the notification that
// reports the job's end.
type JobStore interface {
	CreateJob(ctx context.Context, j Job) (Job, error)
	FinishJob(ctx context.Context, id int64, state JobState, exitCode *int, outputTail, note string) (won bool, err error)
}

// Jobs runs long commands in the background. A job is a row in the store;
// when it ends, the store writes the notification that the thread and the
// agent will see. Jobs outlive the turn that started them, not the process:
// a job found running at start-up is marked interrupted, never re-run.
// The agent's start_job and the chat's `run --bg` both start theirs here.
type Jobs struct {
	Store JobStore
	Exec  Executor
	// Timeout bounds one job (default 1h).
	Timeout time.Duration
	// Unstarted, when set, is told the approval a job claimed when the job
	// cannot start (shutting down, its row not written): the executor that
	// closes a claimed approval's follow-up is never reached then, and
	// the approval must not read as "opsbot stopped before running it"
	// after the next start when the requester was told at once.
	Unstarted func(ctx context.Context, approval string)

	mu      sync.Mutex
	cancels map[int64]context.CancelCauseFunc
	live    map[int64]*liveOutput // output so far of running jobs
	wg      sync.WaitGroup
	closed  bool
}

// Start records job (its session, host, command and requester) and runs
// it on its one host, in dir (the session's working directory, on the
// local host), confined as the Guard's Permit said (the zero Confinement:
// in the sandbox, no network). The job outlives ctx, but keeps its
// values: the executor's audit trail names the person who asked, not the
// bot.
func (j *Jobs) Start(ctx context.Context, job Job, dir string, c Confinement) (Job, error) {
	started, err := j.start(ctx, job, dir, c)
	if err != nil && c.Approval != "" && j.Unstarted != nil {
		j.Unstarted(context.WithoutCancel(ctx), c.Approval)
	}
	return started, err
}

// start records and runs job; see Start.
func (j *Jobs) start(ctx context.Context, job Job, dir string, c Confinement) (Job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return Job{}, fmt.Errorf("hosts: jobs: shutting down")
	}
	job, err := j.Store.CreateJob(context.Background(), Job{SessionID: job.SessionID, Host: job.Host, Command: job.Command, Requester: job.Requester})
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
	j.wg.Go(func() { j.run(ctx, job, dir, c) })
	return job, nil
}

// run runs a job in dir (the session's working directory, on the local
// host — the one its approval showed).
func (j *Jobs) run(ctx context.Context, job Job, dir string, c Confinement) {
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
	timeout := j.Timeout
	if timeout == 0 {
		timeout = time.Hour
	}
	res := j.Exec.Exec(ctx, []string{job.Host}, job.Command, ExecOptions{Confinement: c, Timeout: timeout, Dir: dir,
		OnOutput: func(_ string, _ bool, data []byte) { live.write(data) }})[0]
	state, code := JobSucceeded, &res.ExitCode
	switch {
	case ctx.Err() != nil:
		state, code = JobCancelled, nil
	case res.Err != nil:
		state, code = JobFailed, nil
	case res.ExitCode != 0 || res.Killed:
		state = JobFailed
	}
	// Head and tail: the first error and the summary at the end.
	tail := headTail(res.Stdout+res.Stderr, jobOutputKept)
	if res.Err != nil {
		tail = res.Err.Error()
	}
	note := fmt.Sprintf("job %d (`%s` on %s) %s: %s", job.ID, job.Command, job.Host, state, res.Status())
	switch {
	case state == JobCancelled:
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
// is false when the job is not running here (or j is nil).
func (j *Jobs) Partial(id int64) (out string, ok bool) {
	if j == nil {
		return "", false
	}
	j.mu.Lock()
	live := j.live[id]
	j.mu.Unlock()
	if live == nil {
		return "", false
	}
	return live.String(), true
}

// Wait blocks until every job started so far has ended and its end is
// recorded; unlike Close it cancels none of them.
func (j *Jobs) Wait() { j.wg.Wait() }

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

// headTail keeps the first and last halves of n bytes of s, marking the
// cut, without splitting a UTF-8 sequence: the column headers and the
// first error, and how it ended.
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := safeHead(s, n/2), safeTail(s, n/2)
	return fmt.Sprintf("%s\n[… %d bytes cut here …]\n%s", head, len(s)-len(head)-len(tail), tail)
}

// safeHead is at most n bytes of s from its start, not ending inside a
// UTF-8 sequence.
func safeHead(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:min(n, len(s))]
}

// safeTail is at most n bytes of s from its end, not starting inside a
// UTF-8 sequence.
func safeTail(s string, n int) string {
	i := max(len(s)-n, 0)
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}
