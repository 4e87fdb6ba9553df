package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opsbot/opsbot/agent"
)

// AuditEntry is one row of the audit trail, as the store keeps it
// (cmd/opsbot converts it to store.AuditEntry).
type AuditEntry struct {
	At      time.Time
	Actor   string // who asked: "web:alice"
	Action  string // "mcp.call.start", "mcp.call.end", "mcp.call.refused"
	Subject string // "mcp:grafana"
	Detail  json.RawMessage
}

// Auditor appends to the audit trail.
type Auditor interface {
	Audit(ctx context.Context, e AuditEntry) error
}

// The actions a call is audited under, like a command's start and end.
const (
	ActionStart   = "mcp.call.start"
	ActionEnd     = "mcp.call.end"
	ActionRefused = "mcp.call.refused"
)

// audit is one call's record in the trail: who asked, the server, the
// tool, its arguments, the decision, and how it ended.
type audit struct {
	opt     *Options
	actor   string
	server  string
	tool    string
	args    string
	verdict Verdict
}

func (s *Servers) auditOf(call agent.ToolCall, server, toolName string, args []byte, v Verdict) *audit {
	actor := "opsbot"
	if call.Session.Requester != "" {
		actor = call.Session.Platform + ":" + call.Session.Requester
	}
	return &audit{opt: &s.opt, actor: actor, server: server, tool: toolName, args: string(args), verdict: v}
}

// record appends one entry with the call's own fields and more; the
// strings are redacted before they are encoded. A row that cannot be
// written is logged: the trail is not a gate.
func (a *audit) record(ctx context.Context, action string, more map[string]any) {
	if a.opt.Audit == nil {
		return
	}
	detail := map[string]any{"tool": a.tool, "arguments": a.args, "decision": string(a.verdict.Decision), "reason": a.verdict.Reason}
	for k, v := range more {
		detail[k] = v
	}
	for k, v := range detail {
		if s, ok := v.(string); ok {
			detail[k] = a.opt.redact(s)
		}
	}
	raw, err := json.Marshal(detail)
	if err == nil {
		err = a.opt.Audit.Audit(context.WithoutCancel(ctx), AuditEntry{Actor: a.actor, Action: action, Subject: "mcp:" + a.server, Detail: raw})
	}
	if err != nil {
		a.opt.Log.Error("audit an MCP call", "server", a.server, "tool", a.tool, "err", err)
	}
}
