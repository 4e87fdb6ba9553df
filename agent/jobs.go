package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// JobEndPrompt is the message of the short turn a finished job starts in
// its thread (agent.on_job_end: turn): the job's outcome and the head and
// tail of its output, labelled as opsbot's, so the model answers what the
// job's end means rather than taking it for the person's words.
func JobEndPrompt(j hosts.Job) string {
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
	Guard *approvals.Guard
	Jobs  *hosts.Jobs
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
		return refusal(&approvals.Refusal{Reason: err.Error()})
	} else if len(hosts) != 1 {
		return Errorf("a job runs on one host; %q is %d hosts: start one job per host, or use run_command for a quick command across the group", in.Target, len(hosts))
	}
	permit, err := Authorize(ctx, t.Guard, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	job, err := t.Jobs.Start(ctx, hosts.Job{SessionID: call.Session.ID, Host: permit.Hosts[0], Command: in.Command, Requester: call.Session.Requester},
		call.Session.Cwd, permit.Confinement)
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
	Jobs *hosts.Jobs
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
	job, err := t.Store.Jobs().Job(ctx, in.ID)
	if err != nil {
		return Errorf("no job %d", in.ID)
	}
	if job.SessionID != call.Session.ID {
		return Errorf("job %d belongs to another conversation", in.ID)
	}
	content := FormatJob(job)
	if partial, ok := partialOutput(t.Jobs, job); ok {
		content += "\noutput so far:\n<output host=" + strconv.Quote(job.Host) + " command=" + strconv.Quote(job.Command) + ">\n" +
			unframe(partial) + "\n</output>"
	}
	return ToolResult{Content: content, Summary: fmt.Sprintf("job %d: %s", job.ID, job.State)}
}

// FormatJob renders a job for the model or a person.
func FormatJob(j hosts.Job) string {
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

// partialOutput is a running job's output so far, when jobs knows it.
func partialOutput(jobs *hosts.Jobs, job hosts.Job) (string, bool) {
	if job.State != hosts.JobRunning {
		return "", false
	}
	return jobs.Partial(job.ID)
}

// StoreNotices adapts the store's notification queue for the loop.
type StoreNotices struct{ Store *store.Store }

var _ Notices = StoreNotices{}

// Pending lists what the session's agent has not seen.
func (n StoreNotices) Pending(ctx context.Context, sessionID int64) ([]Notification, error) {
	rows, err := n.Store.Inbox().UninjectedNotifications(ctx, sessionID)
	out := make([]Notification, len(rows))
	for i, r := range rows {
		out[i] = Notification{ID: r.ID, Text: r.Text}
	}
	return out, err
}

// MarkInjected records that the agent saw them.
func (n StoreNotices) MarkInjected(ctx context.Context, ids ...int64) error {
	_, err := n.Store.Inbox().MarkInjected(ctx, ids...)
	return err
}
