package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

//go:embed job_status.md
var jobStatusDescription string

// JobStatus is `job_status`.
type JobStatus struct {
	Store *store.Store
	// Jobs, when set, shows a running job's output so far.
	Jobs *hosts.Jobs
}

var _ agent.Tool = (*JobStatus)(nil)

// Spec describes the tool.
func (*JobStatus) Spec() agent.ToolSpec {
	return spec("job_status", jobStatusDescription, `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)
}

// Call reads the job.
func (t *JobStatus) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		ID int64 `json:"id"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	job, err := t.Store.Jobs().Job(ctx, in.ID)
	if err != nil {
		return agent.Errorf("no job %d", in.ID)
	}
	if job.SessionID != call.Session.ID {
		return agent.Errorf("job %d belongs to another conversation", in.ID)
	}
	content := FormatJob(job)
	if partial, ok := partialOutput(t.Jobs, job); ok {
		content += "\noutput so far:\n<output host=" + strconv.Quote(job.Host) + " command=" + strconv.Quote(job.Command) + ">\n" +
			unframe(partial) + "\n</output>"
	}
	return agent.ToolResult{Content: content, Summary: fmt.Sprintf("job %d: %s", job.ID, job.State)}
}

// partialOutput is a running job's output so far, when jobs knows it.
func partialOutput(jobs *hosts.Jobs, job hosts.Job) (string, bool) {
	if job.State != hosts.JobRunning {
		return "", false
	}
	return jobs.Partial(job.ID)
}

// Concurrent is true: the tool only reads, and asks no one.
func (*JobStatus) Concurrent(agent.ToolCall) bool { return true }
