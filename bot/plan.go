package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// Plans proposes, shows and runs plans (issue 31; docs/PLANS.md): the
// model proposes a goal and its commands once, the policy classifies
// every step before any card, people approve the whole plan on one card
// bound to its canonical text, and opsbot — not the model — runs the
// steps in order, each at most once, checking each again just before it
// runs. The model reads every step's result in a turn after the plan ends.
type Plans struct {
	gate      *approvals.Gate
	guard     *approvals.Guard
	store     planStore
	approvals planApprovals
	sessions  func(ctx context.Context, id int64) (store.Session, error)
	platforms *Platforms
	// platform is the requesters' platform when a session names none.
	platform string
	// handle takes the follow-up turn of an ended plan, as an event on
	// record (Bot.Handle); set by New.
	handle func(ctx context.Context, ev connectors.Event) error
	log    *slog.Logger
}

// planStore is what plans record of themselves (store.Plans).
type planStore interface {
	CreatePlan(ctx context.Context, p store.PlanRecord, hash string) error
	Plan(ctx context.Context, id string) (store.PlanRecord, error)
	SetPlanCard(ctx context.Context, id, message string) error
	StartPlan(ctx context.Context, id, by string) (bool, error)
	EndPlan(ctx context.Context, id, from, to, by, action string, detail map[string]any) (bool, error)
	StartStep(ctx context.Context, id string, k int, command string) (bool, error)
	FinishStep(ctx context.Context, id string, k int, state string, exit int, output string, took time.Duration) error
	CutPlan(ctx context.Context, id string) (bool, error)
	PlanSteps(ctx context.Context, id string) ([]store.PlanStepRecord, error)
	RunningPlans(ctx context.Context) ([]store.PlanRecord, error)
}

// planApprovals reads a plan's approval and claims it for its one run.
type planApprovals interface {
	Approval(ctx context.Context, id string) (approvals.Approval, error)
	ConsumeApproval(ctx context.Context, id, by string) (bool, error)
}

var (
	_ planStore     = (*store.Plans)(nil)
	_ planApprovals = (*store.Approvals)(nil)
)

// PlanDeps is what Plans are built over.
type PlanDeps struct {
	Gate      *approvals.Gate
	Guard     *approvals.Guard
	Store     *store.Store
	Platforms *Platforms
	// Platform is the requesters' platform when a session names none.
	Platform string
	Log      *slog.Logger
}

// NewPlans builds the plans; the bot they serve hands them its clicks and
// takes their follow-up turns (Deps.Plans).
func NewPlans(d PlanDeps) *Plans {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Plans{gate: d.Gate, guard: d.Guard, store: d.Store.Plans(), approvals: d.Store.Approvals(),
		sessions: d.Store.Sessions().Session, platforms: d.Platforms, platform: d.Platform, log: d.Log}
}

// Propose classifies p, and unless a step refuses it, opens its approval
// and posts its card in the session's thread. It returns at once, with
// what the model is told: the plan waits for approval, or why it was
// refused (no card then).
func (ps *Plans) Propose(ctx context.Context, sess agent.SessionInfo, p approvals.Plan) string {
	return ps.propose(ctx, sess, p, "plan", "")
}

func (ps *Plans) propose(ctx context.Context, sess agent.SessionInfo, p approvals.Plan, kind, parent string) string {
	text, _ := ps.proposeCard(ctx, sess, p, kind, parent)
	return text
}

// proposeCard is propose, also saying whether the card was posted.
func (ps *Plans) proposeCard(ctx context.Context, sess agent.SessionInfo, p approvals.Plan, kind, parent string) (string, bool) {
	vs, err := ps.guard.ClassifyPlan(p)
	var refusal *approvals.Refusal
	switch {
	case errors.As(err, &refusal):
		return "Plan refused, no card posted: " + refusal.Reason + ". Change the plan or ask the person.", false
	case err != nil:
		return "Plan refused, no card posted: " + err.Error(), false
	case approvals.Needs(vs) == policy.Allow:
		return "Plan not proposed: every step runs without approval; run them with run_command instead.", false
	case sess.ID == 0 || ps.gate == nil:
		return "Plan refused: nobody can approve a plan here.", false
	}
	s, err := ps.sessions(ctx, sess.ID)
	if err != nil {
		ps.log.Error("plan: session", "err", err)
		return "Plan not proposed: its thread could not be read (internal error).", false
	}
	a, err := ps.open(ctx, sess, p, vs, s, kind, parent)
	if err != nil {
		ps.log.Error("plan: open", "err", err)
		return "Plan not proposed: its approval could not be recorded (internal error).", false
	}
	if !ps.postCard(ctx, a, p, vs, s) {
		return "Plan not proposed: its approval card could not be posted.", false
	}
	return fmt.Sprintf("Plan proposed (%d steps), waiting for approval: its card is in the thread. Once someone other than the requester approves it, "+
		"opsbot runs the steps in order itself; you will be told every step's result then. Do not run these commands yourself meanwhile.", len(p.Steps)), true
}

// open records the plan's approval, as a request whose command is the
// plan's canonical text on every host its steps name, and the plan.
func (ps *Plans) open(ctx context.Context, sess agent.SessionInfo, p approvals.Plan, vs []approvals.StepVerdict, s store.Session, kind, parent string) (approvals.Approval, error) {
	platform := sess.Platform
	if platform == "" {
		platform = ps.platform
	}
	var reasons []string
	for i, v := range vs {
		if v.Decision.Action == policy.Approve {
			reasons = append(reasons, fmt.Sprintf("step %d: %s", i+1, strings.Join(v.Decision.Reasons, "; ")))
		}
	}
	req := approvals.Request{Host: strings.Join(approvals.PlanHosts(vs), ","), Command: p.Canonical(), Reasons: reasons,
		Requester: approvals.Person{Platform: platform, ID: sess.Requester}, Channel: sess.Channel, SessionID: sess.ID}
	a, err := ps.gate.Open(ctx, req)
	if err != nil {
		return a, err
	}
	rec := store.PlanRecord{ApprovalID: a.ID, SessionID: sess.ID, Platform: s.Platform, Workspace: s.Workspace, Channel: s.Channel,
		Thread: s.Thread, Requester: a.Requester, Kind: kind, Parent: parent}
	return a, ps.store.CreatePlan(ctx, rec, a.Hash)
}

// postCard posts the plan's one card. A card that cannot be posted
// withdraws the request: nobody can approve what they cannot see.
func (ps *Plans) postCard(ctx context.Context, a approvals.Approval, p approvals.Plan, vs []approvals.StepVerdict, s store.Session) bool {
	d := connectors.Dest{Platform: s.Platform, Workspace: s.Workspace, Channel: s.Channel, Thread: s.Thread}
	ref, err := ps.platforms.post(ctx, d, planCard(a, p, vs, ps.gate.WhoMayApprove(a)))
	if err != nil {
		ps.log.Error("post plan card", "err", err)
		platform, id, _ := strings.Cut(a.Requester, ":")
		ps.gate.Vote(context.WithoutCancel(ctx), a.ID, approvals.Person{Platform: platform, ID: id}, approvals.VoteDeny)
		return false
	}
	if err := ps.store.SetPlanCard(context.WithoutCancel(ctx), a.ID, ref.ID); err != nil {
		ps.log.Warn("record plan card", "err", err)
	}
	return true
}
