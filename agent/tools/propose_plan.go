package tools

import (
	"context"
	_ "embed"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

//go:embed propose_plan.md
var proposePlanDescription string

// Planner takes a proposed plan: it classifies it, posts its card, and
// returns at once with what the model is told (bot.Plans is one).
type Planner interface {
	Propose(ctx context.Context, sess agent.SessionInfo, p approvals.Plan) string
}

// ProposePlan is `propose_plan`: one approval for a plan of commands
// that opsbot then runs itself (docs/PLANS.md).
type ProposePlan struct{ Planner Planner }

var _ agent.Tool = (*ProposePlan)(nil)

// Spec describes the tool.
func (*ProposePlan) Spec() agent.ToolSpec {
	return spec("propose_plan", proposePlanDescription, `{"type":"object","properties":{`+
		`"goal":{"type":"string","description":"what the plan achieves, for the approvers"},`+
		`"steps":{"type":"array","minItems":1,"items":{"type":"object","properties":{`+
		`"target":{"type":"string","description":"host, group:NAME, or comma list"},`+
		`"command":{"type":"string","description":"the exact command"},`+
		`"why":{"type":"string"},"verify":{"type":"string","description":"a command on the same target that checks the step worked, run right after it; a non-zero exit fails the step"},`+
		`"rollback":{"type":"string","description":"a command that undoes the step"}},"required":["target","command"]}}},`+
		`"required":["goal","steps"]}`)
}

// Call hands the plan to the Planner; it never waits for a click.
func (t *ProposePlan) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in approvals.Plan
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	if t.Planner == nil {
		return agent.Errorf("plans are off here: nobody can approve one")
	}
	msg := t.Planner.Propose(ctx, call.Session, in)
	return agent.ToolResult{Content: msg, Summary: "plan: " + firstSentence(msg)}
}

// firstSentence is msg up to its first colon or period, for a summary.
func firstSentence(msg string) string {
	for i, r := range msg {
		if r == ':' || r == '.' {
			return msg[:i]
		}
	}
	return msg
}
