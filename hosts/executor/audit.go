package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/hosts"
)

// AuditEntry is one row of the audit trail, as the store keeps it (it
// converts to store.AuditEntry).
type AuditEntry struct {
	ID      int64
	At      time.Time
	Actor   string // who: "web:alice", "opsbot", "scheduler"
	Action  string // what: "command.start", "command.end"
	Subject string // on what: "host:web-1"
	Detail  json.RawMessage
}

// Auditor appends to the audit trail; cmd/opsbot adapts the store to it.
// Audit returns once the entry is on disk.
type Auditor interface {
	Audit(ctx context.Context, e AuditEntry) error
}

// BatchAuditor is an Auditor that also appends many entries in one
// commit: Audited records a fan-out's starts, then its ends, with one
// fsync each rather than one per host (issue 28).
type BatchAuditor interface {
	Auditor
	AuditBatch(ctx context.Context, entries []AuditEntry) error
}

// Decider names the policy's decision on a command for a host, in a word
// ("allow", "approve", "deny"), for the trail; approvals.FleetPolicy is
// one.
type Decider interface {
	Decision(host, command string) string
}

// Audited is a hosts.Executor that writes every command it runs to the
// audit trail, the allowed ones as much as the approved: who asked
// (WithRequester), the host, the command and the policy's decision before
// it starts ("command.start"), and how it ended after ("command.end"). A
// chat `run`, an agent's tool call and a background job all run through
// it.
type Audited struct {
	hosts.Executor
	// Policy gives the decision recorded with each command: the same
	// verdict the Guard acted on, as the policy is a function of host and
	// command.
	Policy Decider
	Audit  Auditor
	// Redactor redacts what is recorded (nil: the default rules).
	Redactor *redact.Redactor
	Log      *slog.Logger
}

var _ hosts.Executor = Audited{}

// Exec records each host's command, runs it, and records its end. All
// the starts are on disk before the first host is dialled, and the ends
// are written together once all hosts are done.
func (e Audited) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	who := RequesterOf(ctx)
	starts := make([]AuditEntry, 0, len(names))
	for _, h := range names {
		starts = e.add(starts, who, "command.start", h, tagThread(ctx, map[string]any{"command": command, "decision": e.decision(h, command)}))
	}
	e.recordAll(ctx, starts)
	results := e.Executor.Exec(ctx, names, command, opts)
	ends := make([]AuditEntry, 0, len(results))
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
		ends = e.add(ends, who, "command.end", r.Host, tagThread(ctx, detail))
	}
	e.recordAll(ctx, ends)
	return results
}

func (e Audited) decision(host, command string) string {
	if e.Policy == nil {
		return ""
	}
	return e.Policy.Decision(host, command)
}

// record appends one entry (see recordAll).
func (e Audited) record(ctx context.Context, who, action, host string, detail map[string]any) {
	e.recordAll(ctx, e.add(nil, who, action, host, detail))
}

// add appends to entries the one for host; its strings are redacted
// before they are encoded (redacting JSON text would miss a secret whose
// quotes are escaped).
func (e Audited) add(entries []AuditEntry, who, action, host string, detail map[string]any) []AuditEntry {
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
	if err != nil { // detail holds strings and numbers only
		e.logFailure(action, host, err)
		return entries
	}
	return append(entries, AuditEntry{Actor: who, Action: action, Subject: "host:" + host, Detail: raw})
}

// recordAll writes entries, in one commit when the Auditor can. An audit
// row that cannot be written is logged, and the command still runs: the
// trail is not a gate.
func (e Audited) recordAll(ctx context.Context, entries []AuditEntry) {
	ctx = context.WithoutCancel(ctx)
	if b, ok := e.Audit.(BatchAuditor); ok && len(entries) > 1 {
		if err := b.AuditBatch(ctx, entries); err != nil {
			e.logFailure(entries[0].Action, fmt.Sprintf("%d hosts", len(entries)), err)
		}
		return
	}
	for _, a := range entries {
		if err := e.Audit.Audit(ctx, a); err != nil {
			e.logFailure(a.Action, strings.TrimPrefix(a.Subject, "host:"), err)
		}
	}
}

func (e Audited) logFailure(action, host string, err error) {
	if e.Log != nil {
		e.Log.Error("audit a command", "action", action, "host", host, "err", err)
	}
}

// requesterKey carries who asked for the work a context runs.
type requesterKey struct{}

// WithRequester marks ctx as work asked for by who, a person's key
// ("web:alice"); an empty who leaves ctx as it is.
func WithRequester(ctx context.Context, who string) context.Context {
	if who == "" {
		return ctx
	}
	return context.WithValue(ctx, requesterKey{}, who)
}

// RequesterOf is who asked for the work ctx runs: "web:alice", or
// "opsbot" for work no person asked for in this process (a background
// job).
func RequesterOf(ctx context.Context) string {
	if who, ok := ctx.Value(requesterKey{}).(string); ok {
		return who
	}
	return "opsbot"
}

// AuditedRunner is a hosts.Runner that writes every command it runs to the
// audit trail, as Audited does, in the name of Actor, and redacts the
// output it returns. The health checks run through one.
type AuditedRunner struct {
	hosts.Runner
	Policy   Decider
	Audit    Auditor
	Redactor *redact.Redactor
	// Actor is who the trail says asked: "scheduler".
	Actor string
	Log   *slog.Logger
}

var _ hosts.Runner = AuditedRunner{}

// Run records the command, runs it, redacts its output and records its end.
func (r AuditedRunner) Run(ctx context.Context, h hosts.Host, command string, opts hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
	e := Audited{Policy: r.Policy, Audit: r.Audit, Redactor: r.Redactor, Log: r.Log}
	e.record(ctx, r.Actor, "command.start", h.Name, tagThread(ctx, map[string]any{"command": command, "decision": e.decision(h.Name, command)}))
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
	e.record(ctx, r.Actor, "command.end", h.Name, tagThread(ctx, detail))
	return res, err
}
