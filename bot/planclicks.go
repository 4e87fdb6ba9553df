package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// owns reports whether a vote's request is a plan's.
func (ps *Plans) owns(ctx context.Context, ev connectors.Event) bool {
	if ev.ActionID != ActionApprove && ev.ActionID != ActionDeny {
		return isPlanAction(ev.ActionID)
	}
	// A read that fails takes the vote too: only a request known to be
	// no plan's goes to the cards, whose follow-up cannot run a plan.
	_, err := ps.store.Plan(ctx, ev.Value)
	return !errors.Is(err, store.ErrNotFound)
}

// click acts on a plan's button.
func (ps *Plans) click(ctx context.Context, ev connectors.Event) {
	switch ev.ActionID {
	case ActionApprove:
		ps.vote(ctx, ev, approvals.VoteApprove)
	case ActionDeny:
		ps.vote(ctx, ev, approvals.VoteDeny)
	case ActionPlanContinue:
		ps.again(ctx, ev, false)
	case ActionPlanRollback:
		ps.again(ctx, ev, true)
	case ActionPlanStop:
		ps.stop(ctx, ev)
	default:
		respond(ctx, ps.platforms, ev, "That button does nothing any more.")
	}
}

// vote counts a vote on a plan's card; the vote that approves it runs it,
// here and now, step by step. The requester's own approval is refused,
// in words, and runs nothing.
func (ps *Plans) vote(ctx context.Context, ev connectors.Event, vote string) {
	voter := approvals.Person{Platform: ev.Platform, ID: ev.User.ID, Groups: ev.User.Groups}
	res, err := ps.gate.Vote(ctx, ev.Value, voter, vote)
	if err != nil {
		internalError(ctx, ps.platforms, ps.log, ev, err)
		return
	}
	if res.Status != approvals.VoteDecided {
		respond(ctx, ps.platforms, ev, voteMessage(res))
		return
	}
	if res.Approval.State != approvals.ApprovalApproved {
		r, ok := ps.load(ctx, ev.Value)
		if !ok {
			return
		}
		ps.store.EndPlan(ctx, ev.Value, "proposed", "denied", voter.Key(), "plan.denied", nil)
		r.heading = "Plan " + decisionText(res.Approval) + ": nothing ran"
		ps.show(ctx, r)
		ps.followUp(ctx, r, decisionText(res.Approval)+": nothing ran")
		return
	}
	ps.run(ctx, ev.Value, voter.Key())
}

// again proposes, as a new plan with a card of its own, the steps of a
// halted plan that did not complete (Continue) or the approved rollback
// commands of the steps that ran, in reverse (Run rollback).
func (ps *Plans) again(ctx context.Context, ev connectors.Event, rollback bool) {
	r, ok := ps.load(ctx, ev.Value)
	if !ok || r.rec.State != "halted" {
		respond(ctx, ps.platforms, ev, "This plan is not halted any more; nothing changed.")
		return
	}
	steps, err := ps.store.PlanSteps(ctx, ev.Value)
	if err != nil {
		internalError(ctx, ps.platforms, ps.log, ev, err)
		return
	}
	next, kind, to := rest(r.plan, steps), "continue", "continued"
	if rollback {
		next, kind, to = rollbackOf(r.plan, steps), "rollback", "rolling_back"
	}
	if len(next.Steps) == 0 {
		respond(ctx, ps.platforms, ev, "There is nothing to "+kind+": no step of the approved plan is left for it.")
		return
	}
	if won, _ := ps.store.EndPlan(ctx, ev.Value, "halted", to, ev.Platform+":"+ev.User.ID, "plan."+to, nil); !won {
		respond(ctx, ps.platforms, ev, "Someone acted on this plan already; nothing changed.")
		return
	}
	if conn, ok := ps.platforms.conn(ev.Platform); ok {
		editRetrying(ctx, conn, ev.Ref, connectors.Message{Text: fmt.Sprintf("Plan halted; %s asked to %s it: a new card for that is in the thread.",
			connectors.Mention(ev.User.ID), map[bool]string{false: "continue", true: "roll back"}[rollback])})
	}
	sess := agent.SessionInfo{ID: r.rec.SessionID, Requester: displayName(r.rec.Requester), Platform: r.rec.Platform, Channel: r.rec.Channel}
	// What propose returns is the model's; a person sees the new card, or
	// why there is none.
	if text, posted := ps.proposeCard(ctx, sess, next, kind, ev.Value); !posted {
		ps.platforms.reply(ctx, ev, "No new card: "+personText(text))
	}
}

// personText is propose's answer to the model, told to a person: the
// reason alone, without what the model is asked to do.
func personText(toModel string) string {
	t := strings.TrimPrefix(strings.TrimPrefix(toModel, "Plan refused, no card posted: "), "Plan not proposed: ")
	t = strings.TrimSuffix(t, " Change the plan or ask the person.")
	t, _, _ = strings.Cut(t, "; run them with run_command instead")
	return t
}

// rest is the plan of the steps that did not complete.
func rest(p approvals.Plan, ran []store.PlanStepRecord) approvals.Plan {
	out := approvals.Plan{Goal: p.Goal + " (continued)"}
	for k, s := range p.Steps {
		if !slices.ContainsFunc(ran, func(r store.PlanStepRecord) bool { return r.Step == k && r.State == string(approvals.StepComplete) }) {
			out.Steps = append(out.Steps, s)
		}
	}
	return out
}

// rollbackOf is the plan of the approved rollback commands of the steps
// that started, last first.
func rollbackOf(p approvals.Plan, ran []store.PlanStepRecord) approvals.Plan {
	out := approvals.Plan{Goal: "Roll back: " + p.Goal}
	for i := len(ran) - 1; i >= 0; i-- {
		if s := p.Steps[ran[i].Step]; s.Rollback != "" {
			out.Steps = append(out.Steps, approvals.PlanStep{Target: s.Target, Command: s.Rollback, Why: fmt.Sprintf("rollback of step %d", ran[i].Step+1)})
		}
	}
	return out
}

// stop ends a halted plan.
func (ps *Plans) stop(ctx context.Context, ev connectors.Event) {
	if won, _ := ps.store.EndPlan(ctx, ev.Value, "halted", "stopped", ev.Platform+":"+ev.User.ID, "plan.stopped", nil); !won {
		respond(ctx, ps.platforms, ev, "This plan is not halted any more; nothing changed.")
		return
	}
	if conn, ok := ps.platforms.conn(ev.Platform); ok {
		editRetrying(ctx, conn, ev.Ref, connectors.Message{Text: "Plan stopped by " + connectors.Mention(ev.User.ID) + "; nothing more runs."})
	}
}

// Recover says, in each plan's thread, that a restart cut the plans left
// running: which steps ran, which was cut off (never run again); each is
// halted, with Continue, Run rollback and Stop.
func (ps *Plans) Recover(ctx context.Context) {
	running, err := ps.store.RunningPlans(ctx)
	if err != nil {
		ps.log.Warn("plans left running", "err", err)
		return
	}
	for _, rec := range running {
		if won, err := ps.store.CutPlan(ctx, rec.ApprovalID); err != nil || !won {
			continue
		}
		ps.recoverOne(ctx, rec.ApprovalID)
	}
}

func (ps *Plans) recoverOne(ctx context.Context, id string) {
	r, ok := ps.load(ctx, id)
	if !ok {
		return
	}
	steps, _ := ps.store.PlanSteps(ctx, id)
	var said []string
	for _, s := range steps {
		st := &r.prog.Steps[s.Step]
		st.Status, st.ExitCode, st.Output, st.Duration = approvals.StepStatus(s.State), s.ExitCode, s.Output, s.EndedAt.Sub(s.StartedAt)
		said = append(said, fmt.Sprintf("step %d %s", s.Step+1, stepWords(st.Status, s.ExitCode)))
	}
	if len(said) == 0 {
		said = []string{"no step had started"}
	}
	r.heading = "Plan cut off by a restart"
	ps.show(ctx, r)
	text := fmt.Sprintf("The plan %q was cut off by a restart: %s. Nothing runs again by itself.", r.plan.Goal, joinWords(said))
	if _, err := ps.platforms.post(ctx, ps.dest(r.rec), connectors.Message{Text: text, Buttons: haltedButtons(id)}); err != nil {
		ps.log.Warn("post plan cut", "err", err)
	}
}

func stepWords(s approvals.StepStatus, exit int) string {
	switch s {
	case approvals.StepComplete:
		return "ran (exit 0)"
	case approvals.StepError:
		return fmt.Sprintf("ran and failed (exit %d)", exit)
	}
	return "had started and was cut off (not run again)"
}

func joinWords(ws []string) string {
	if len(ws) == 1 {
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// recoverCut is Recover on plans that may be off (nil).
func (ps *Plans) recoverCut(ctx context.Context) {
	if ps != nil {
		ps.Recover(ctx)
	}
}
