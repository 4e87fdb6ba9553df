package approvals

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// ApprovalUse is what GateApprover needs of the store beyond the Gate: it
// finds a request to re-attach to, claims an approval for its one run, and
// records that the waiter acted on the decision (so nothing else does).
// *store.Store has it.
type ApprovalUse interface {
	ReusableApproval(ctx context.Context, sessionID int64, hash string) (Approval, bool, error)
	ConsumeApproval(ctx context.Context, id, by string) (bool, error)
	FinishFollowUp(ctx context.Context, approvalID string) (bool, error)
}

// GateApprover is the Approver of a real deployment: requests go through
// the Gate, so every decision is recorded and audited, and each approval
// allows exactly one run.
type GateApprover struct {
	Gate  *Gate
	Store ApprovalUse
	// Platform names the requesters' platform ("web", "slack", "console")
	// when a session does not say: a request is the person of the
	// session's own platform, so that slack:U1 cannot approve what
	// slack:U1 asked for by passing as web:U1.
	Platform string
	// Groups gives a host's groups, for approver rules per host group.
	Groups func(host string) []string
}

var _ Approver = GateApprover{}

// Approve re-attaches to a request for exactly this command that is still
// pending or was approved and not yet used (a turn resumed after a
// restart), or opens a new one; it reports the request as pending and
// waits for its decision. The command may run only when the decision
// allows exactly this request and this call claimed it: the Outcome then
// names the approval (Outcome.Approval), whose follow-up stays open until
// the command starts (see hosts.Confinement.Approval).
func (g GateApprover) Approve(ctx context.Context, req CommandRequest, pending func(Pending)) (Outcome, error) {
	areq := g.request(req)
	a, found, err := g.Store.ReusableApproval(ctx, req.SessionID, areq.Hash())
	if err != nil {
		return Outcome{}, err
	}
	if !found {
		if a, err = g.Gate.Open(ctx, areq); err != nil {
			return Outcome{}, err
		}
	}
	pending(Pending{ID: a.ID, Target: a.Host, Command: a.Command, Reasons: a.Reasons, Requester: a.Requester,
		ExpiresAt: a.ExpiresAt, Reattached: found})
	res, err := g.Gate.Wait(ctx, a.ID)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrShutdown) {
			// Stopped by a person: withdraw the request, so its card
			// cannot approve a run nobody waits for any more. A shutdown
			// leaves it pending, and its follow-up open, for after the
			// restart.
			g.withdraw(context.WithoutCancel(ctx), context.Cause(ctx), a.ID, areq.Requester)
		}
		return Outcome{}, err
	}
	return g.decided(ctx, areq, a.ID, res)
}

// request is what the approvers see and what the approval binds: the
// hosts the target resolved to, sorted, in the requester's platform.
func (g GateApprover) request(req CommandRequest) Request {
	hosts := slices.Sorted(slices.Values(req.Hosts))
	if len(hosts) == 0 {
		hosts = []string{req.Target}
	}
	areq := Request{Host: strings.Join(hosts, ","), Command: req.Command, Cwd: req.Cwd, Reasons: req.Reasons,
		Requester: Person{Platform: g.platform(req.Requester), ID: req.Requester.ID}, Channel: req.Channel, SessionID: req.SessionID}
	if g.Groups != nil {
		for _, h := range hosts {
			areq.HostGroups = append(areq.HostGroups, g.Groups(h)...)
		}
	}
	return areq
}

// decided is the Outcome of a decided request: approved and claimed for
// this run, or not, in words for people and the model alike ("denied by
// @bob", "expired: nobody decided within 15 minutes" — no platform keys).
func (g GateApprover) decided(ctx context.Context, areq Request, id string, res Result) (Outcome, error) {
	out := Outcome{State: string(res.Outcome), DecidedBy: atName(res.DecidedBy)}
	if res.Outcome == ApprovalExpired || strings.HasPrefix(res.DecidedBy, "opsbot") {
		out.State, out.DecidedBy = DecisionText(res.Approval, atName), ""
	}
	if res.Allows(areq) {
		claimed, err := g.Store.ConsumeApproval(context.WithoutCancel(ctx), id, areq.Requester.Key())
		if err != nil {
			return Outcome{}, err
		}
		out.Approved = claimed
		if claimed {
			// The follow-up closes as the command starts.
			out.Approval = id
			return out, nil
		}
		out.State = "already used"
	}
	// This waiter acted on the decision: the follow-up recorded for a
	// restart is done.
	if _, err := g.Store.FinishFollowUp(context.WithoutCancel(ctx), id); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

// withdraw denies a request whose waiter was stopped: in the name of the
// person who pressed Stop when they may deny it, else of the requester
// (who may always withdraw their own request).
func (g GateApprover) withdraw(ctx context.Context, cause error, id string, requester Person) {
	var by StoppedBy
	if errors.As(cause, &by) && by.Person.ID != "" {
		if res, err := g.Gate.Vote(ctx, id, by.Person, VoteDeny); err == nil && res.Status != VoteRefused {
			g.Store.FinishFollowUp(ctx, id)
			return
		}
	}
	g.Gate.Vote(ctx, id, requester, VoteDeny)
	g.Store.FinishFollowUp(ctx, id)
}

// platform is the requester's platform: the session's own, else the
// configured one.
func (g GateApprover) platform(who Person) string {
	if who.Platform != "" {
		return who.Platform
	}
	return g.Platform
}
