package tools

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

//go:embed cancel_job.md
var cancelJobDescription string

// CancelJob is `cancel_job`: stop a background job of this conversation.
type CancelJob struct {
	Store *store.Store
	Jobs  *hosts.Jobs
}

var _ agent.Tool = (*CancelJob)(nil)

// Spec describes the tool.
func (*CancelJob) Spec() agent.ToolSpec {
	return spec("cancel_job", cancelJobDescription, `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)
}

// Call cancels the job if it belongs to this conversation and runs.
func (t *CancelJob) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		ID int64 `json:"id"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	job, err := t.Store.Jobs().Job(ctx, in.ID)
	if err != nil || job.SessionID != call.Session.ID {
		return agent.Errorf("no job %d in this conversation", in.ID)
	}
	if !t.Jobs.Cancel(job.ID) {
		return agent.Errorf("job %d is not running: it %s", job.ID, job.State)
	}
	return agent.ToolResult{Content: fmt.Sprintf("job %d is being stopped; you will be told when it has ended", job.ID),
		Summary: fmt.Sprintf("job %d cancelled", job.ID)}
}
