package approvals

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/policy"
)

// GrantFor is how long a scoped grant lasts: "Approve similar for 30 min
// in this thread".
const GrantFor = 30 * time.Minute

// Grant is a scoped grant: a person who approved a request let commands
// similar to it (policy.Similar) run in the same thread, on hosts of the
// same set and in the same directory, without a new card, until it
// expires or someone revokes it. Deny-class commands are never covered:
// the Guard asks a grant only about commands the policy sends to people.
type Grant struct {
	// ID is the grant's number, the one people see (`approvals revoke
	// 12`) and the N of its audit subject grant:N: one number for a grant
	// wherever it is read.
	ID        int64
	SessionID int64
	// Number is the grant's ordinal in its thread, kept by the store; no
	// person is shown it (it differs from ID, which the audit names).
	Number int64
	// Hosts are the request's hosts, sorted and comma-separated, as
	// Approval.Host.
	Hosts string
	Cwd   string
	// Command is the approved command: the pattern others are compared
	// with.
	Command string
	// By is who granted it (a Person.Key); Approval the request it came
	// from.
	By, Approval string
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

// GrantStore keeps grants; *store.Approvals is one. Every change is
// audited with the grant's id.
type GrantStore interface {
	CreateGrant(ctx context.Context, g Grant) (Grant, error)
	// ActiveGrants lists a thread's grants neither revoked nor expired at
	// now, oldest first.
	ActiveGrants(ctx context.Context, sessionID int64, now time.Time) ([]Grant, error)
	// RevokeGrant ends the thread's grant with this ID; false when the
	// thread had no such active grant.
	RevokeGrant(ctx context.Context, sessionID, id int64, by string, now time.Time) (bool, error)
	// UseGrant audits a command the grant let run.
	UseGrant(ctx context.Context, id int64, command, hosts, requester string) error
}

// GrantSimilar is a click on "Approve similar": voter's approval of the
// request, and, when that approval decided it, a grant for commands
// similar to it. The requester cannot grant (even where they may approve
// their own request), nor can a request that needs more than one
// approval be granted by one person.
func (g *Gate) GrantSimilar(ctx context.Context, id string, voter Person, gs GrantStore) (VoteResult, Grant, error) {
	a, err := g.store.Approval(ctx, id)
	if err != nil {
		return VoteResult{}, Grant{}, fmt.Errorf("approvals: grant: %w", err)
	}
	if why := grantRefusal(a, voter); why != "" && a.State == ApprovalPending {
		return VoteResult{Status: VoteRefused, Approval: a, Reason: why}, Grant{}, nil
	}
	res, err := g.Vote(ctx, id, voter, VoteApprove)
	if err != nil || res.Status != VoteDecided || res.Approval.State != ApprovalApproved {
		return res, Grant{}, err
	}
	now := g.opt.Now()
	gr, err := gs.CreateGrant(context.WithoutCancel(ctx), Grant{SessionID: a.SessionID, Hosts: a.Host, Cwd: a.Cwd,
		Command: a.Command, By: voter.Key(), Approval: a.ID, CreatedAt: now, ExpiresAt: now.Add(GrantFor)})
	if err != nil {
		return res, Grant{}, fmt.Errorf("approvals: grant: %w", err)
	}
	return res, gr, nil
}

// grantRefusal says why voter may not grant similar commands from a, or "".
func grantRefusal(a Approval, voter Person) string {
	switch {
	case samePerson(voter.Key(), a.Requester):
		shown := strings.ReplaceAll(policy.RenderCommand(Shown(a.Command), policy.DisplayOptions{Limit: 200}).Preview, "\n", " ")
		return fmt.Sprintf("you asked for %s; someone else has to approve commands like `%s` on %s in this thread", asked(a), shown, a.Host)
	case a.Quorum > 1:
		return fmt.Sprintf("this request needs %s, so one person cannot approve similar commands; use Approve", Approvals(a.Quorum))
	case a.SessionID == 0:
		return "this request is not in a thread; use Approve"
	}
	return ""
}

// Grants is the Guard's GrantCheck backed by a GrantStore.
type Grants struct {
	Store GrantStore
	// Now is the clock (default time.Now).
	Now func() time.Time
}

var _ GrantCheck = Grants{}

// Covered reports whether an active grant of req's thread covers it: its
// hosts all in the grant's host set, the same directory, and a command
// similar to the grant's. A use is audited with the grant's id before
// Covered says yes; an error covers nothing.
func (g Grants) Covered(ctx context.Context, req CommandRequest) (bool, error) {
	if req.SessionID == 0 || len(req.Hosts) == 0 {
		return false, nil
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	active, err := g.Store.ActiveGrants(ctx, req.SessionID, now())
	if err != nil {
		return false, fmt.Errorf("approvals: grants: %w", err)
	}
	for _, gr := range active {
		if gr.Cwd != req.Cwd || !hostsWithin(req.Hosts, gr.Hosts) || !policy.Similar(gr.Command, req.Command) {
			continue
		}
		hs := strings.Join(slices.Sorted(slices.Values(req.Hosts)), ",")
		who := req.Requester.ID
		if req.Requester.Platform != "" {
			who = req.Requester.Key()
		}
		if err := g.Store.UseGrant(context.WithoutCancel(ctx), gr.ID, req.Command, hs, who); err != nil {
			return false, fmt.Errorf("approvals: grant use: %w", err)
		}
		return true, nil
	}
	return false, nil
}

// hostsWithin reports whether every one of hosts is in set, a
// comma-separated host list.
func hostsWithin(hosts []string, set string) bool {
	in := strings.Split(set, ",")
	for _, h := range hosts {
		if !slices.Contains(in, h) {
			return false
		}
	}
	return true
}
