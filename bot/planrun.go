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
	// heading is the card's first line: where the plan stands (show adds
	// who approved it, and when, on every edit).
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
	r.heading = "Plan running"
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
		r.prog.Steps = append(r.prog.Steps, approvals.StepProgress{Target: s.Target, Command: s.Command, Status: approvals.StepPending,
			Verify: s.Verify, VerifyStatus: approvals.StepPending})
	}
	return r, true
}

// step runs step k, then its verify command if it has one, or says why
// not ("" when both ran and succeeded).
func (ps *Plans) step(ctx context.Context, r *planRun, k int) string {
	s := r.plan.Steps[k]
	hs, why := ps.stepHosts(r, s)
	if why != "" {
		return why
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
	start := time.Now()
	o := stepOutcome(ps.exec(ctx, r, hs, s.Command, d))
	if o.why == "" && s.Verify != "" {
		o = ps.verify(ctx, r, k, hs, o)
	}
	ps.finish(ctx, r, k, o, time.Since(start))
	return o.why
}

// stepHosts resolves a step's target again: a host the approval did not
// cover halts the plan.
func (ps *Plans) stepHosts(r *planRun, s approvals.PlanStep) ([]string, string) {
	hs, err := ps.guard.Exec.Resolve(s.Target)
	if err != nil {
		return nil, fmt.Sprintf("its target %q no longer resolves", s.Target)
	}
	approved := strings.Split(r.a.Host, ",")
	for _, h := range hs {
		if !slices.Contains(approved, h) {
			return nil, fmt.Sprintf("its target %q now names host %s, which the approval did not cover", s.Target, h)
		}
	}
	return hs, ""
}

// exec runs one command of an approved plan on hs: confined as an allowed
// command always is when the policy allows it, as approved otherwise.
func (ps *Plans) exec(ctx context.Context, r *planRun, hs []string, command string, d approvals.HostDecision) []hosts.ExecResult {
	conf := hosts.Confinement{Approved: true}
	if d.Action == policy.Allow {
		conf = hosts.Confinement{ConnectPorts: d.ConnectPorts, Hidden: d.Hidden, Env: policy.UnattendedEnv()}
	}
	return ps.guard.Exec.Exec(executor.WithSession(ctx, r.a.SessionID), hs, command, hosts.ExecOptions{Confinement: conf})
}

// verify runs step k's verify command after its command succeeded,
// checked by the policy just before like any step and audited as part of
// the step: a deny, or a verify that fails, fails the step.
func (ps *Plans) verify(ctx context.Context, r *planRun, k int, hs []string, step stepEnd) stepEnd {
	command := r.plan.Steps[k].Verify
	prog := &r.prog.Steps[k]
	d := ps.guard.Decide(hs, command)
	if d.Action == policy.Deny {
		prog.VerifyStatus = approvals.StepError
		step.status, step.exit, step.why = approvals.StepError, -1, "the policy now denies its verify: "+strings.Join(d.Reasons, "; ")
		return step
	}
	prog.VerifyStatus = approvals.StepInProgress
	ps.show(ctx, r)
	start := time.Now()
	v := stepOutcome(ps.exec(ctx, r, hs, command, d))
	took := time.Since(start)
	if err := ps.store.VerifyStep(context.WithoutCancel(ctx), r.a.ID, k, command, v.exit, took); err != nil {
		ps.log.Warn("audit plan verify", "err", err)
	}
	prog.VerifyStatus, prog.VerifyExit, prog.VerifyOutput = v.status, v.exit, v.summary
	if v.why != "" {
		step.status, step.exit, step.why = approvals.StepError, v.exit, "its verify `"+oneLine(command)+"` "+strings.TrimPrefix(v.why, "it ")
	}
	return step
}

// stepEnd is how a command of a plan ended on all its hosts.
type stepEnd struct {
	status  approvals.StepStatus
	exit    int
	summary string
	// why is why it failed; "" when it succeeded everywhere.
	why string
}

// stepOutcome reads a command's results: it failed if it failed anywhere.
func stepOutcome(results []hosts.ExecResult) stepEnd {
	o := stepEnd{status: approvals.StepComplete}
	var out []string
	for _, res := range results {
		if t := strings.TrimSpace(res.Stdout + res.Stderr); t != "" {
			out = append(out, firstLines(t))
		}
		if res.Err != nil || res.ExitCode != 0 || res.Killed {
			o.status, o.exit = approvals.StepError, res.ExitCode
			if o.exit == 0 {
				o.exit = -1
			}
			o.why = "it failed on " + res.Host + ": " + res.Status()
			if res.Err != nil {
				o.why = "it could not run on " + res.Host
			}
		}
	}
	o.summary = strings.Join(out, " | ")
	return o
}

// finish records how step k ended, its verify included, and shows it.
func (ps *Plans) finish(ctx context.Context, r *planRun, k int, o stepEnd, took time.Duration) {
	ps.store.FinishStep(context.WithoutCancel(ctx), r.a.ID, k, string(o.status), o.exit, o.summary, took)
	st := &r.prog.Steps[k]
	st.Status, st.ExitCode, st.Duration, st.Output = o.status, o.exit, took, o.summary
	ps.show(ctx, r)
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

// show edits the plan's card to its progress. An approved plan's card
// says who approved it, and when, in every edit to its end.
func (ps *Plans) show(ctx context.Context, r *planRun) {
	conn, ok := ps.platforms.conn(r.rec.Platform)
	if !ok || r.rec.CardMessage == "" {
		return
	}
	heading := r.heading
	if r.a.State == approvals.ApprovalApproved {
		heading += " — " + decisionText(r.a) + " at " + approvals.FormatTime(r.a.DecidedAt)
	}
	ref := connectors.Ref{Platform: r.rec.Platform, Workspace: r.rec.Workspace, Channel: r.rec.Channel, Thread: r.rec.Thread, ID: r.rec.CardMessage}
	if err := editProgress(context.WithoutCancel(ctx), conn, ref, heading, r.prog); err != nil {
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
		b.WriteString(verifyNote(s) + "\n")
	}
	b.WriteString("Tell the person what this means.")
	requester := displayName(r.rec.Requester)
	ev := connectors.Event{ID: fmt.Sprintf("plan:%s:%d", r.a.ID, r.prog.Ran()), Kind: connectors.EventMessage, Platform: r.rec.Platform, Workspace: r.rec.Workspace,
		Channel: r.rec.Channel, Thread: r.rec.Thread, User: connectors.User{ID: requester, Name: requester}, Text: b.String(), Mention: true, Question: true}
	if err := ps.handle(context.WithoutCancel(ctx), ev); err != nil {
		ps.log.Warn("plan follow-up turn", "err", err)
	}
}

// verifyNote is what the model reads of a step's verify: "" when the step
// has none.
func verifyNote(s approvals.StepProgress) string {
	switch {
	case s.Verify == "":
		return ""
	case s.VerifyStatus == approvals.StepComplete || s.VerifyStatus == approvals.StepError:
		note := fmt.Sprintf("; verify `%s`: %s (exit %d)", s.Verify, s.VerifyStatus, s.VerifyExit)
		if s.VerifyOutput != "" {
			note += ": " + s.VerifyOutput
		}
		return note
	}
	return fmt.Sprintf("; verify `%s`: %s", s.Verify, s.VerifyStatus)
}
