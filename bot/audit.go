package bot

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// Auditor appends to the audit trail; *store.Store is one.
type Auditor interface {
	Audit(ctx context.Context, e store.AuditEntry) error
}

// AuditedExecutor is a hosts.Executor that writes every command it runs
// to the audit trail, the allowed ones as much as the approved: who asked,
// the host, the command and the policy's decision before it starts
// ("command.start"), and how it ended after ("command.end"). A chat `run`,
// an agent's tool call and a background job all run through it.
type AuditedExecutor struct {
	hosts.Executor
	// Policy gives the decision recorded with each command: the same
	// verdict the Guard acted on, as the policy is a function of host and
	// command.
	Policy approvals.HostPolicy
	Audit  Auditor
	// Redactor redacts what is recorded (nil: the default rules).
	Redactor *redact.Redactor
	Log      *slog.Logger
}

var _ hosts.Executor = AuditedExecutor{}

// Exec records each host's command, runs it, and records its end.
func (e AuditedExecutor) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	who := requesterOf(ctx)
	for _, h := range names {
		e.record(ctx, who, "command.start", h, map[string]any{"command": command, "decision": e.decision(h, command)})
	}
	results := e.Executor.Exec(ctx, names, command, opts)
	for _, r := range results {
		detail := map[string]any{"command": command, "exit_code": r.ExitCode, "duration_ms": r.Duration.Milliseconds()}
		if r.Signal != "" {
			detail["signal"] = r.Signal
		}
		if r.Killed {
			detail["killed"] = true
		}
		if r.Err != nil {
			detail["error"] = r.Err.Error()
		}
		e.record(ctx, who, "command.end", r.Host, detail)
	}
	return results
}

func (e AuditedExecutor) decision(host, command string) string {
	if e.Policy == nil {
		return ""
	}
	return e.Policy.Check(host, command).Action.String()
}

// record appends one entry; its strings are redacted before they are
// encoded (redacting JSON text would miss a secret whose quotes are
// escaped). An audit row that cannot be written is logged, and the
// command still runs: the trail is not a gate.
func (e AuditedExecutor) record(ctx context.Context, who, action, host string, detail map[string]any) {
	red := e.Redactor
	if red == nil {
		red = redact.New()
	}
	for k, v := range detail {
		if s, ok := v.(string); ok {
			detail[k] = red.String(s)
		}
	}
	raw, err := json.Marshal(detail)
	if err == nil {
		err = e.Audit.Audit(context.WithoutCancel(ctx), store.AuditEntry{Actor: who, Action: action, Subject: "host:" + host, Detail: raw})
	}
	if err != nil && e.Log != nil {
		e.Log.Error("audit a command", "host", host, "err", err)
	}
}

// requesterKey carries who asked for the work a context runs.
type requesterKey struct{}

// withRequester marks ctx as work asked for by the person of ev.
func withRequester(ctx context.Context, ev connectors.Event) context.Context {
	if ev.User.ID == "" {
		return ctx
	}
	return context.WithValue(ctx, requesterKey{}, approvals.Person{Platform: ev.Platform, ID: ev.User.ID}.Key())
}

// requesterOf is who asked for the work ctx runs: "web:alice", or "opsbot"
// for work no person asked for in this process (a background job).
func requesterOf(ctx context.Context) string {
	if who, ok := ctx.Value(requesterKey{}).(string); ok {
		return who
	}
	return "opsbot"
}

// AuditedRunner is a hosts.Runner that writes every command it runs to the
// audit trail, as AuditedExecutor does, in the name of Actor, and redacts
// the output it returns. The health checks run through one.
type AuditedRunner struct {
	hosts.Runner
	Policy   approvals.HostPolicy
	Audit    Auditor
	Redactor *redact.Redactor
	// Actor is who the trail says asked: "scheduler".
	Actor string
	Log   *slog.Logger
}

var _ hosts.Runner = AuditedRunner{}

// Run records the command, runs it, redacts its output and records its end.
func (r AuditedRunner) Run(ctx context.Context, h hosts.Host, command string, opts hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
	e := AuditedExecutor{Policy: r.Policy, Audit: r.Audit, Redactor: r.Redactor, Log: r.Log}
	e.record(ctx, r.Actor, "command.start", h.Name, map[string]any{"command": command, "decision": e.decision(h.Name, command)})
	res, err := r.Runner.Run(ctx, h, command, opts, onChunk)
	red := r.Redactor
	if red == nil {
		red = redact.New()
	}
	res.Output = red.Bytes(res.Output)
	detail := map[string]any{"command": command, "exit_code": res.ExitCode, "duration_ms": res.Duration.Milliseconds()}
	if res.Signal != "" {
		detail["signal"] = res.Signal
	}
	if res.TimedOut {
		detail["killed"] = true
	}
	if err != nil {
		detail["error"] = err.Error()
	}
	e.record(ctx, r.Actor, "command.end", h.Name, detail)
	return res, err
}
