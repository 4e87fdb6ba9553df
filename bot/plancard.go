package bot

import (
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/policy"
)

// The buttons of a halted plan; their value is the plan's approval id. A
// plan's card has the Approve and Deny of every card (ActionApprove,
// ActionDeny), so that each connector's rules for who may press Approve
// hold for plans too (the web chat's shared key cannot).
const (
	ActionPlanContinue = "plan_continue"
	ActionPlanRollback = "plan_rollback"
	ActionPlanStop     = "plan_stop"
)

// isPlanAction reports whether a button is a plan's.
func isPlanAction(id string) bool { return strings.HasPrefix(id, "plan_") }

// planCard is a pending plan's one card: the goal, and each step with its
// target, command (invisible characters made visible), the policy's
// verdict and reason; who may approve, the quorum and the expiry.
func planCard(a approvals.Approval, p approvals.Plan, vs []approvals.StepVerdict, who string) connectors.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "**Plan needs approval** — requested by %s\nGoal: %s\n", mention(a.Requester), planLine(p.Goal))
	for i, s := range p.Steps {
		v := vs[i].Decision
		fmt.Fprintf(&b, "**Step %d** on `%s` — %s", i+1, codeText(s.Target, 80), v.Action)
		if len(v.Reasons) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(v.Reasons, "; "))
		}
		if s.Why != "" {
			fmt.Fprintf(&b, " (why: %s)", planLine(s.Why))
		}
		b.WriteString("\n" + codeBlock(s.Command))
		if s.Rollback != "" {
			b.WriteString("rollback:\n" + codeBlock(s.Rollback))
		}
	}
	m := connectors.Message{Text: strings.TrimSuffix(b.String(), "\n"), Fields: []connectors.Field{
		{Title: "Hosts", Value: a.Host}, {Title: "Who may approve", Value: who}, {Title: "Needs", Value: approvals.Approvals(a.Quorum)}}}
	m.Context = "expires " + approvals.FormatTime(a.ExpiresAt) + "; opsbot runs the steps in order once approved, stopping at the first failure"
	m.Buttons = []connectors.Button{
		{ActionID: ActionApprove, Value: a.ID, Label: "Approve plan", Style: connectors.StylePrimary},
		{ActionID: ActionDeny, Value: a.ID, Label: "Deny", Style: connectors.StyleDanger},
	}
	return m
}

// progressCard shows a plan as it runs: each step's status and a short
// summary of its output; heading says how it was decided or where it
// stands.
func progressCard(heading string, prog approvals.PlanProgress) connectors.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\nGoal: %s\n", heading, planLine(prog.Goal))
	for i, s := range prog.Steps {
		fmt.Fprintf(&b, "%d. %s `%s` on `%s`", i+1, stepMark[s.Status], codeText(s.Command, 400), codeText(s.Target, 80))
		switch s.Status {
		case approvals.StepComplete, approvals.StepError:
			fmt.Fprintf(&b, " — exit %d in %s", s.ExitCode, s.Duration.Round(1e6))
		case approvals.StepInProgress:
			b.WriteString(" — running")
		case approvals.StepCut:
			b.WriteString(" — cut off by a restart; not run again")
		}
		if s.Output != "" {
			fmt.Fprintf(&b, ": %s", codeText(s.Output, 200))
		}
		b.WriteString("\n")
	}
	return connectors.Message{Text: strings.TrimSuffix(b.String(), "\n")}
}

var stepMark = map[approvals.StepStatus]string{approvals.StepPending: "⏸", approvals.StepInProgress: "⏳",
	approvals.StepComplete: "✅", approvals.StepError: "❌", approvals.StepCut: "⚠️"}

// haltedButtons are what a halted plan offers: the rest as a new plan,
// the rollback of what ran, or nothing more.
func haltedButtons(id string) []connectors.Button {
	return []connectors.Button{
		{ActionID: ActionPlanContinue, Value: id, Label: "Continue", Style: connectors.StylePrimary},
		{ActionID: ActionPlanRollback, Value: id, Label: "Run rollback"},
		{ActionID: ActionPlanStop, Value: id, Label: "Stop", Style: connectors.StyleDanger},
	}
}

// planLine shows s on one line, its invisible characters made visible.
func planLine(s string) string {
	return strings.ReplaceAll(policy.RenderCommand(s, policy.DisplayOptions{}).Text, "\n", " ")
}

// codeBlock shows a command exactly, its invisible and control characters
// made visible, in a fence no backtick inside can close.
func codeBlock(command string) string {
	preview := policy.RenderCommand(command, policy.DisplayOptions{}).Preview
	fence := strings.Repeat("`", max(3, longestRun(preview, '`')+1))
	return fence + "\n" + preview + "\n" + fence + "\n"
}
