package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/policy"
)

//go:embed policy_check.md
var policyCheckDescription string

// PolicyCheck is `policy_check`: what the policy would decide for a
// command on a target, without running it.
type PolicyCheck struct{ Guard *approvals.Guard }

var _ agent.Tool = (*PolicyCheck)(nil)

// Spec describes the tool.
func (*PolicyCheck) Spec() agent.ToolSpec {
	return spec("policy_check", policyCheckDescription,
		`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"command":{"type":"string"}},"required":["target","command"]}`)
}

// Call decides without running.
func (t *PolicyCheck) Call(_ context.Context, call agent.ToolCall) agent.ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	hs, err := t.Guard.Exec.Resolve(in.Target)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	d := t.Guard.Decide(hs, in.Command)
	words := map[policy.Action]string{policy.Allow: "runs at once", policy.Approve: "waits for a person to approve it", policy.Deny: "is refused"}[d.Action]
	msg := fmt.Sprintf("`%s` on %s %s", in.Command, in.Target, words)
	if len(d.Reasons) > 0 {
		msg += ": " + strings.Join(d.Reasons, "; ")
	}
	return agent.ToolResult{Content: msg, Summary: d.Action.String()}
}

// Concurrent is true: the tool only reads, and asks no one.
func (*PolicyCheck) Concurrent(agent.ToolCall) bool { return true }
