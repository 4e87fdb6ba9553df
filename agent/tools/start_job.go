package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

//go:embed start_job.md
var startJobDescription string

// StartJob is `start_job`: a long command in the background, through the
// same guard as run_command.
type StartJob struct {
	Guard *approvals.Guard
	Jobs  *hosts.Jobs
}

var _ agent.Tool = (*StartJob)(nil)

// Spec describes the tool.
func (*StartJob) Spec() agent.ToolSpec {
	return spec("start_job", startJobDescription,
		`{"type":"object","properties":{"target":{"type":"string","description":"one host"},"command":{"type":"string"}},"required":["target","command"]}`)
}

// Describe is the status line.
func (*StartJob) Describe(call agent.ToolCall) string {
	var in runCommandInput
	json.Unmarshal(call.Input, &in)
	return fmt.Sprintf("starting job `%s` on %s…", in.Command, in.Target)
}

// Call authorizes and starts the job.
func (t *StartJob) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	// A job runs on one host: a group is refused before anyone is asked
	// to approve it, so that no approval is used up for nothing.
	if hosts, err := t.Guard.Exec.Resolve(in.Target); err != nil {
		return refusal(&approvals.Refusal{Reason: err.Error()})
	} else if len(hosts) != 1 {
		return agent.Errorf("a job runs on one host; %q is %d hosts: start one job per host, or use run_command for a quick command across the group", in.Target, len(hosts))
	}
	permit, err := Authorize(ctx, t.Guard, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	job, err := t.Jobs.Start(ctx, hosts.Job{SessionID: call.Session.ID, Host: permit.Hosts[0], Command: in.Command, Requester: call.Session.Requester},
		call.Session.Cwd, permit.Confinement)
	if err != nil {
		return agent.Errorf("could not start the job: %v", err)
	}
	return agent.ToolResult{Content: fmt.Sprintf("job %d started on %s; you will be notified when it ends", job.ID, job.Host),
		Summary: fmt.Sprintf("job %d started", job.ID)}
}
