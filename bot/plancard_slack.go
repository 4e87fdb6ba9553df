package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// Where the platform shows plans natively (Slack's plan block), a
// running plan's card is that block, edited in place: a title (the
// heading and goal), and a card per step going pending → in_progress →
// complete or error. Other platforms keep the text card (progressCard).

// planShower is a connector that shows a message as a plan: title, then
// one card per step (the Slack connector's plan block).
type planShower interface {
	EditPlan(ctx context.Context, ref connectors.Ref, title string, steps []connectors.Task) error
}

var _ planShower = (*redactedConn)(nil)

// errNoPlans is EditPlan's error for a connector that shows no plans.
var errNoPlans = errors.New("bot: this connector shows no plan blocks")

// EditPlan redacts the plan and shows it, where the connector behind the
// redactor shows plans.
func (c *redactedConn) EditPlan(ctx context.Context, ref connectors.Ref, title string, steps []connectors.Task) error {
	ps, ok := c.Connector.(planShower)
	if !ok {
		return errNoPlans
	}
	shown := make([]connectors.Task, len(steps))
	for i, s := range steps {
		s.Title, s.Details, s.Output = c.red.String(s.Title), c.red.String(s.Details), c.red.String(s.Output)
		shown[i] = s
	}
	return ps.EditPlan(ctx, ref, c.red.String(title), shown)
}

// showsPlans reports whether conn shows plan blocks.
func showsPlans(conn connectors.Connector) bool {
	if rc, ok := conn.(*redactedConn); ok {
		conn = rc.Connector
	}
	_, ok := conn.(planShower)
	return ok
}

// editProgress shows a running plan's progress in its card: a plan block
// where the platform has one, else the text card.
func editProgress(ctx context.Context, conn connectors.Connector, ref connectors.Ref, heading string, prog approvals.PlanProgress) error {
	ps, ok := conn.(planShower)
	if !ok || !showsPlans(conn) {
		return editRetrying(ctx, conn, ref, progressCard(heading, prog))
	}
	title := fmt.Sprintf("%s — Goal: %s", heading, planLine(prog.Goal))
	return retryLimited(ctx, func() error { return ps.EditPlan(ctx, ref, title, planSteps(prog)) })
}

// planSteps are a plan's steps as cards: the command and its target,
// the status, and how it ended.
func planSteps(prog approvals.PlanProgress) []connectors.Task {
	steps := make([]connectors.Task, len(prog.Steps))
	for i, s := range prog.Steps {
		t := connectors.Task{ID: fmt.Sprintf("step-%d", i+1), Title: fmt.Sprintf("%s on %s", codeText(s.Command, 160), codeText(s.Target, 80)),
			Status: stepStatus[s.Status]}
		switch s.Status {
		case approvals.StepComplete, approvals.StepError:
			t.Output = fmt.Sprintf("exit %d in %s", s.ExitCode, s.Duration.Round(1e6))
		case approvals.StepCut:
			t.Output = "cut off by a restart; not run again"
		}
		if s.Output != "" {
			t.Output += ": " + codeText(s.Output, 200)
		}
		steps[i] = t
	}
	return steps
}

// stepStatus is a step's status as a card's: a step a restart cut ended
// in error.
var stepStatus = map[approvals.StepStatus]connectors.TaskStatus{approvals.StepPending: connectors.TaskPending,
	approvals.StepInProgress: connectors.TaskInProgress, approvals.StepComplete: connectors.TaskComplete,
	approvals.StepError: connectors.TaskError, approvals.StepCut: connectors.TaskError}
