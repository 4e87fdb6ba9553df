package agent

import (
	"context"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// TailFileTool is `tail_file`: the end of a file on a host, capped, run
// as `tail -c` through the same guard as run_command.
type TailFileTool struct{ Guard *approvals.Guard }

// maxTailBytes caps what tail_file reads.
const maxTailBytes = 64 << 10

// Spec describes the tool.
func (*TailFileTool) Spec() ToolSpec {
	return ToolSpec{Name: "tail_file", Description: "Read the last bytes of a file (a log, a config) on a host or group. " +
		"Use it instead of cat for logs and large files: it is capped (default 8192 bytes, at most 65536).",
		InputSchema: schema(`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"path":{"type":"string","description":"absolute path of the file"},"bytes":{"type":"integer","description":"how many bytes from the end, default 8192"}},"required":["target","path"]}`)}
}

// Describe is the status line.
func (*TailFileTool) Describe(call ToolCall) string {
	var in struct{ Target, Path string }
	_ = decodeInput(call, &in)
	return fmt.Sprintf("reading the end of %s on %s…", in.Path, in.Target)
}

// Call builds the tail command and runs it like run_command.
func (t *TailFileTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in struct {
		Target string `json:"target"`
		Path   string `json:"path"`
		Bytes  int    `json:"bytes"`
	}
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(in.Target) == "" || strings.TrimSpace(in.Path) == "" {
		return Errorf("tail_file needs a target and a path")
	}
	n := min(max(in.Bytes, 0), maxTailBytes)
	if n == 0 {
		n = 8192
	}
	quoted, err := syntax.Quote(in.Path, syntax.LangBash)
	if err != nil {
		return Errorf("the path cannot be quoted for a shell: %v", err)
	}
	input := fmt.Sprintf(`{"target":%q,"command":%q}`, in.Target, fmt.Sprintf("tail -c %d -- %s", n, quoted))
	return (&RunCommandTool{Guard: t.Guard}).Call(ctx, ToolCall{ID: call.ID, Name: "run_command", Input: []byte(input), Session: call.Session, Emit: call.Emit})
}

// PolicyCheckTool is `policy_check`: what the policy would decide for a
// command on a target, without running it.
type PolicyCheckTool struct{ Guard *approvals.Guard }

// Spec describes the tool.
func (*PolicyCheckTool) Spec() ToolSpec {
	return ToolSpec{Name: "policy_check", Description: "Ask whether a command would run at once, wait for a person's approval, or be refused on a target, " +
		"and why, without running it. Use it before proposing a command that might change something, to tell the person what will happen.",
		InputSchema: schema(`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"command":{"type":"string"}},"required":["target","command"]}`)}
}

// Call decides without running.
func (t *PolicyCheckTool) Call(_ context.Context, call ToolCall) ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	hs, err := t.Guard.Exec.Resolve(in.Target)
	if err != nil {
		return Errorf("%v", err)
	}
	d := t.Guard.Decide(hs, in.Command)
	words := map[approvals.Action]string{approvals.Allow: "runs at once", approvals.Approve: "waits for a person to approve it", approvals.Deny: "is refused"}[d.Action]
	msg := fmt.Sprintf("`%s` on %s %s", in.Command, in.Target, words)
	if len(d.Reasons) > 0 {
		msg += ": " + strings.Join(d.Reasons, "; ")
	}
	return ToolResult{Content: msg, Summary: d.Action.String()}
}

// CancelJobTool is `cancel_job`: stop a background job of this
// conversation.
type CancelJobTool struct {
	Store *store.Store
	Jobs  *hosts.Jobs
}

// Spec describes the tool.
func (*CancelJobTool) Spec() ToolSpec {
	return ToolSpec{Name: "cancel_job", Description: "Stop a background job you started in this conversation (by its id), " +
		"e.g. when it is no longer needed or runs far longer than expected.",
		InputSchema: schema(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)}
}

// Call cancels the job if it belongs to this conversation and runs.
func (t *CancelJobTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in struct {
		ID int64 `json:"id"`
	}
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	job, err := t.Store.Jobs().Job(ctx, in.ID)
	if err != nil || job.SessionID != call.Session.ID {
		return Errorf("no job %d in this conversation", in.ID)
	}
	if !t.Jobs.Cancel(job.ID) {
		return Errorf("job %d is not running: it %s", job.ID, job.State)
	}
	return ToolResult{Content: fmt.Sprintf("job %d is being stopped; you will be told when it has ended", job.ID),
		Summary: fmt.Sprintf("job %d cancelled", job.ID)}
}

// HealthReports reads the latest results of the scheduled health checks,
// as stored (checks.LatestReport): the agent reads them, never re-runs.
type HealthReports interface {
	// Schedules are the schedules' names.
	Schedules() []string
	// Latest is a schedule's last report as text, failures first.
	Latest(ctx context.Context, schedule string) (string, error)
}

// HealthTool is `health_results`.
type HealthTool struct{ Reports HealthReports }

// Spec describes the tool.
func (*HealthTool) Spec() ToolSpec {
	return ToolSpec{Name: "health_results", Description: "The latest results of the scheduled health checks (hosts × checks, failures first, " +
		"what changed since the run before), as stored; it runs nothing. Use it first when asked what is failing or what changed.",
		InputSchema: schema(`{"type":"object","properties":{"schedule":{"type":"string","description":"a schedule's name; empty for all"}}}`)}
}

// Call reads one schedule's report, or every schedule's.
func (t *HealthTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in struct {
		Schedule string `json:"schedule"`
	}
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	names := t.Reports.Schedules()
	if in.Schedule != "" {
		names = []string{in.Schedule}
	}
	if len(names) == 0 {
		return Errorf("no health checks are scheduled (checks.schedules in the config)")
	}
	var b strings.Builder
	for _, n := range names {
		text, err := t.Reports.Latest(ctx, n)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n\n", n, err)
			continue
		}
		fmt.Fprintf(&b, "<output schedule=%q>\n%s\n</output>\n\n", n, unframe(text))
	}
	return ToolResult{Content: b.String(), Summary: fmt.Sprintf("health results of %d schedule(s)", len(names))}
}
