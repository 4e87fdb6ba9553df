package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// planRun is one approved plan being run: its record, its text and its
// progress as people see it.
type planRun struct {
	rec  store.PlanRecord
	a    approvals.Approval
	plan approvals.Plan
	prog approvals.PlanProgress
	// heading is the card's first line: who approved it.
	heading string
}

// run runs an approved plan once: only the caller that claims its approval
// and moves it to running does; each step is recorded as started before
// its command runs and checked against the policy just before.
func (ps *Plans) run(ctx context.Context, id, by string) {
	r, ok := ps.load(ctx, id)
	if !ok || r.a.State != approvals.ApprovalApproved {
		return
	}
	if claimed, err := ps.approvals.ConsumeApproval(ctx, id, by); err != nil || !claimed {
		return
	}
	if won, err := ps.store.StartPlan(ctx, id, by); err != nil || !won {
		return
	}
	r.heading = "Plan " + decisionText(r.a)
	ps.show(ctx, r)
	for k := range r.plan.Steps {
		if why := ps.step(ctx, r, k); why != "" {
			ps.halt(ctx, r, k, why)
			return
		}
	}
	ps.store.EndPlan(ctx, id, "running", "done", "opsbot", "plan.done", map[string]any{"steps": len(r.plan.Steps)})
	if r.rec.Kind == "rollback" && r.rec.Parent != "" {
		ps.store.EndPlan(ctx, r.rec.Parent, "rolling_back", "rolled_back", "opsbot", "plan.rolled_back", map[string]any{"rollback": id})
	}
	r.heading = "Plan done: every step ran"
	ps.show(ctx, r)
	ps.followUp(ctx, r, "ended: every step ran")
}

// load reads a plan, its approval and its text.
func (ps *Plans) load(ctx context.Context, id string) (*planRun, bool) {
	rec, err := ps.store.Plan(ctx, id)
	if err != nil {
		return nil, false
	}
	a, err := ps.approvals.Approval(ctx, id)
	if err != nil {
		return nil, false
	}
	p, err := approvals.ParsePlan(a.Command)
	if err != nil {
		return nil, false
	}
	r := &planRun{rec: rec, a: a, plan: p, prog: approvals.PlanProgress{Goal: p.Goal}}
	for _, s := range p.Steps {
		r.prog.Steps = append(r.prog.Steps, approvals.StepProgress{Target: s.Target, Command: s.Command, Status: approvals.StepPending})
	}
	return r, true
}

// step runs step k, or says why not ("" when it ran and succeeded).
func (ps *Plans) step(ctx context.Context, r *planRun, k int) string {
	s := r.plan.Steps[k]
	hs, err := ps.guard.Exec.Resolve(s.Target)
	if err != nil {
		return fmt.Sprintf("its target %q no longer resolves", s.Target)
	}
	approved := strings.Split(r.a.Host, ",")
	for _, h := range hs {
		if !slices.Contains(approved, h) {
			return fmt.Sprintf("its target %q now names host %s, which the approval did not cover", s.Target, h)
		}
	}
	d := ps.guard.Decide(hs, s.Command)
	if d.Action == policy.Deny {
		return "the policy now denies it: " + strings.Join(d.Reasons, "; ")
	}
	if won, err := ps.store.StartStep(ctx, r.a.ID, k, s.Command); err != nil || !won {
		return "it was started before (a step runs at most once)"
	}
	r.prog.Steps[k].Status = approvals.StepInProgress
	ps.show(ctx, r)
	conf := hosts.Confinement{Approved: true}
	if d.Action == policy.Allow {
		conf = hosts.Confinement{ConnectPorts: d.ConnectPorts, Hidden: d.Hidden, Env: policy.UnattendedEnv()}
	}
	start := time.Now()
	results := ps.guard.Exec.Exec(executor.WithSession(ctx, r.a.SessionID), hs, s.Command, hosts.ExecOptions{Confinement: conf})
	return ps.finish(ctx, r, k, results, time.Since(start))
}

// finish records how step k ended and says why it failed, if it did.
func (ps *Plans) finish(ctx context.Context, r *planRun, k int, results []hosts.ExecResult, took time.Duration) string {
	status, exit, why := approvals.StepComplete, 0, ""
	var out []string
	for _, res := range results {
		if o := strings.TrimSpace(res.Stdout + res.Stderr); o != "" {
			out = append(out, firstLines(o))
		}
		if res.Err != nil || res.ExitCode != 0 || res.Killed {
			status, exit = approvals.StepError, res.ExitCode
			if exit == 0 {
				exit = -1
			}
			why = "it failed on " + res.Host + ": " + res.Status()
			if res.Err != nil {
				why = "it could not run on " + res.Host
			}
		}
	}
	summary := strings.Join(out, " | ")
	ps.store.FinishStep(context.WithoutCancel(ctx), r.a.ID, k, string(status), exit, summary, took)
	r.prog.Steps[k] = approvals.StepProgress{Target: r.plan.Steps[k].Target, Command: r.plan.Steps[k].Command, Status: status,
		ExitCode: exit, Duration: took, Output: summary}
	ps.show(ctx, r)
	return why
}

// firstLines is a short summary of a step's output: its first 3 lines.
func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = append(lines[:3], "…")
	}
	return strings.Join(lines, " ⏎ ")
}

// halt stops a plan at step k, audited, and offers Continue, Run rollback
// or Stop; the model is told.
func (ps *Plans) halt(ctx context.Context, r *planRun, k int, why string) {
	ctx = context.WithoutCancel(ctx)
	ps.store.EndPlan(ctx, r.a.ID, "running", "halted", "opsbot", "plan.halted", map[string]any{"step": k + 1, "why": why})
	r.heading = fmt.Sprintf("Plan halted at step %d: %s", k+1, why)
	ps.show(ctx, r)
	m := connectors.Message{Text: fmt.Sprintf("Plan halted at step %d: %s. Continue asks for a new approval of the steps that did not complete; "+
		"Run rollback proposes the approved plan's rollback commands of the steps that ran, in reverse; Stop ends it.", k+1, why), Buttons: haltedButtons(r.a.ID)}
	if _, err := ps.platforms.post(ctx, ps.dest(r.rec), m); err != nil {
		ps.log.Warn("post plan halt", "err", err)
	}
	ps.followUp(ctx, r, fmt.Sprintf("halted at step %d: %s", k+1, why))
}

// show edits the plan's card to its progress.
func (ps *Plans) show(ctx context.Context, r *planRun) {
	conn, ok := ps.platforms.conn(r.rec.Platform)
	if !ok || r.rec.CardMessage == "" {
		return
	}
	ref := connectors.Ref{Platform: r.rec.Platform, Workspace: r.rec.Workspace, Channel: r.rec.Channel, Thread: r.rec.Thread, ID: r.rec.CardMessage}
	if err := editProgress(context.WithoutCancel(ctx), conn, ref, r.heading, r.prog); err != nil {
		ps.log.Warn("update plan card", "err", err)
	}
}

func (ps *Plans) dest(rec store.PlanRecord) connectors.Dest {
	return connectors.Dest{Platform: rec.Platform, Workspace: rec.Workspace, Channel: rec.Channel, Thread: rec.Thread}
}

// followUp has the model read every step's result, in a turn of its own
// in the plan's thread (on record, so a restart still takes it).
func (ps *Plans) followUp(ctx context.Context, r *planRun, how string) {
	if ps.handle == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[opsbot note, not the person's words] The plan %q %s.\n", r.plan.Goal, how)
	for i, s := range r.prog.Steps {
		fmt.Fprintf(&b, "step %d `%s` on %s: %s", i+1, s.Command, s.Target, s.Status)
		if s.Status == approvals.StepComplete || s.Status == approvals.StepError {
			fmt.Fprintf(&b, " (exit %d)", s.ExitCode)
		}
		if s.Output != "" {
			fmt.Fprintf(&b, ": %s", s.Output)
		}
		b.WriteString("\n")
	}
	b.WriteString("Tell the person what this means.")
	requester := displayName(r.rec.Requester)
	ev := connectors.Event{ID: fmt.Sprintf("plan:%s:%d", r.a.ID, r.prog.Ran()), Kind: connectors.EventMessage, Platform: r.rec.Platform, Workspace: r.rec.Workspace,
		Channel: r.rec.Channel, Thread: r.rec.Thread, User: connectors.User{ID: requester, Name: requester}, Text: b.String(), Mention: true, Question: true}
	if err := ps.handle(context.WithoutCancel(ctx), ev); err != nil {
		ps.log.Warn("plan follow-up turn", "err", err)
	}
}
