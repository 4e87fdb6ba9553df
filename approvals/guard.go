package approvals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// HostDecision is the policy's verdict on a command for one host, as the
// Guard acts on it: decided by code, never by the model.
type HostDecision struct {
	Action  policy.Action
	Reasons []string
	// ConnectPorts are the TCP ports of the network destinations an
	// allowed command names: its sandbox lets it connect to those only.
	ConnectPorts []uint16
	// Hidden are the secret paths the sandbox masks for an allowed
	// command (hosts.Confinement.Hidden).
	Hidden []string
}

// HostPolicy classifies a command for a host of the fleet.
type HostPolicy interface {
	Check(host, command string) HostDecision
}

// CommandRequest is someone asking to run a command: what the caller
// knows (target, command, directory, who asks and where), and what the
// Guard adds before it asks people (the hosts the target resolved to, the
// policy's reasons).
type CommandRequest struct {
	Target string
	// Hosts is what Target resolved to: the approval binds these, so a
	// group that changes meanwhile cannot widen it.
	Hosts   []string
	Command string
	Cwd     string
	Reasons []string
	// Requester is who asks; an empty Platform is the Approver's own.
	Requester Person
	Channel   string
	SessionID int64
}

// Pending describes a command waiting for a decision, for the caller to
// show (an approval card, a terminal prompt).
type Pending struct {
	ID        string
	Target    string
	Command   string
	Reasons   []string
	Requester string
	ExpiresAt time.Time
	// Reattached is set when the request existed already (a turn resumed
	// after a restart): its card was posted then.
	Reattached bool
}

// Outcome is how a request ended.
type Outcome struct {
	Approved  bool
	State     string // approved, denied, expired
	DecidedBy string
	// Approval is the approval this request claimed for its one run (its
	// id), when the Approver keeps a record of it: the Permit passes it
	// on (hosts.Confinement.Approval), so that the run marks it used as
	// its command starts.
	Approval string
}

// Approver waits for people to decide on a request; pending is called once
// the request is recorded, so the caller can show it.
type Approver interface {
	Approve(ctx context.Context, req CommandRequest, pending func(Pending)) (Outcome, error)
}

// RefusalCounter counts the commands the Guard does not let run: denied
// by the policy ("deny", "refused"), or not approved by people
// ("approve", "not_approved" or "cancelled").
type RefusalCounter interface {
	Refused(decision policy.Action, result string)
}

// Permit is what the Guard lets run: on which hosts, and how confined.
type Permit struct {
	Hosts []string
	hosts.Confinement
}

// Guard puts every command through the policy and, when the policy says
// so, through people: the one path to an Executor for the agent's tools,
// the chat's `run` and `opsbot hosts exec`.
type Guard struct {
	Policy   HostPolicy
	Approver Approver
	Exec     hosts.Executor
	// DirOnAllHosts says the caller runs commands in cwd on every host
	// (opsbot hosts exec --dir), so approvals bind it for every target.
	DirOnAllHosts bool
	// Refusals counts the commands that do not run (denied, not
	// approved). May be nil.
	Refusals RefusalCounter
	// Grants lets a command that needs approval run without a card when
	// a scoped grant of its thread covers it (grant.go). May be nil.
	Grants GrantCheck
}

// GrantCheck says whether a scoped grant covers a request the policy
// sends to people, and audits the use when it does. The Guard never asks
// it about a command the policy denies.
type GrantCheck interface {
	Covered(ctx context.Context, req CommandRequest) (bool, error)
}

// Refusal is a command the Guard did not let run, in words for the person
// or the model who asked: a result to read, not a failure.
type Refusal struct {
	Reason string
	// err is the Approver's error the refusal stems from, if any.
	err error
}

func (e *Refusal) Error() string { return e.Reason }

// Unwrap is the Approver's error the refusal stems from, or nil.
func (e *Refusal) Unwrap() error { return e.err }

// Authorize resolves the target and decides: nil means the command may run
// on the returned hosts now. See Permit.
func (g *Guard) Authorize(ctx context.Context, req CommandRequest, pending func(Pending)) ([]string, error) {
	p, err := g.Permit(ctx, req, pending)
	return p.Hosts, err
}

// Permit resolves req.Target and decides, the strictest decision over
// the hosts winning; nil error means the command may run now, confined as
// the Permit says: sandboxed when the policy allowed it without a person,
// as the bot when a person approved it. Pass its Confinement on in
// hosts.ExecOptions. req.Cwd is the directory the command will run in on
// the local host; it is part of what an approval binds, and dropped for
// other targets, where it does not apply. pending is called when the
// request waits for people.
func (g *Guard) Permit(ctx context.Context, req CommandRequest, pending func(Pending)) (Permit, error) {
	hs, err := g.Exec.Resolve(req.Target)
	if err != nil {
		return Permit{}, &Refusal{Reason: err.Error()}
	}
	if !g.DirOnAllHosts && (len(hs) != 1 || hs[0] != hosts.LocalHost) {
		req.Cwd = ""
	}
	d := g.Decide(hs, req.Command)
	switch d.Action {
	case policy.Allow:
		return Permit{Hosts: hs, Confinement: hosts.Confinement{ConnectPorts: d.ConnectPorts, Hidden: d.Hidden, Env: policy.UnattendedEnv()}}, nil
	case policy.Approve:
		req.Hosts, req.Reasons = hs, d.Reasons
		if g.Grants != nil {
			if ok, _ := g.Grants.Covered(ctx, req); ok {
				return Permit{Hosts: hs, Confinement: hosts.Confinement{Approved: true}}, nil
			}
		}
		approval, err := g.approve(ctx, req, pending)
		if err != nil {
			g.refused(policy.Approve, notApproved(ctx))
		}
		return Permit{Hosts: hs, Confinement: hosts.Confinement{Approved: true, Approval: approval}}, err
	}
	g.refused(policy.Deny, "refused")
	return Permit{}, &Refusal{Reason: "denied by policy: " + strings.Join(d.Reasons, "; ")}
}

func (g *Guard) refused(decision policy.Action, result string) {
	if g.Refusals != nil {
		g.Refusals.Refused(decision, result)
	}
}

// notApproved is the result of a command that waited for people and did
// not run: stopped while it waited, or not approved.
func notApproved(ctx context.Context) string {
	if ctx.Err() != nil {
		return "cancelled"
	}
	return "not_approved"
}

// Decide is the policy's decision on command over hosts: the strictest
// one's, with the network ports of all when every host allows it. An
// action the policy does not know is a deny.
func (g *Guard) Decide(hosts []string, command string) HostDecision {
	worst := HostDecision{Action: policy.Allow}
	for _, d := range checkAll(g.Policy, hosts, command) {
		if d.Action < policy.Allow || d.Action > policy.Deny {
			d = HostDecision{Action: policy.Deny, Reasons: []string{fmt.Sprintf("policy returned %q", d.Action)}}
		}
		if d.Action > worst.Action {
			worst = d
		}
		if d.Action == policy.Allow && worst.Action == policy.Allow {
			worst.ConnectPorts = append(worst.ConnectPorts, d.ConnectPorts...)
			worst.Hidden = mergeHidden(worst.Hidden, d.Hidden)
		}
	}
	return worst
}

// approve waits for people to decide on req: nil error when they approved
// it, with the approval the run claimed (Outcome.Approval).
func (g *Guard) approve(ctx context.Context, req CommandRequest, pending func(Pending)) (string, error) {
	if g.Approver == nil {
		return "", &Refusal{Reason: "needs approval, and no one can approve here: " + strings.Join(req.Reasons, "; ")}
	}
	if pending == nil {
		pending = func(Pending) {}
	}
	out, err := g.Approver.Approve(ctx, req, pending)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &Refusal{Reason: "approval failed: " + storeWords(err), err: err}
	}
	if !out.Approved {
		who := ""
		if out.DecidedBy != "" {
			who = " by " + out.DecidedBy
		}
		return "", &Refusal{Reason: fmt.Sprintf("not run: the approval request was %s%s", out.State, who)}
	}
	return out.Approval, nil
}

// storeWords is what a person is told of err: a write the database
// refused says so in its own words, without the wrapping's prefixes.
func storeWords(err error) string {
	var u interface{ StoreUnavailable() string } // *store.Unavailable: store imports approvals
	if errors.As(err, &u) {
		return u.StoreUnavailable()
	}
	return err.Error()
}

// mergeHidden is the union of two lists of secret paths, in order.
func mergeHidden(a, b []string) []string {
	for _, p := range b {
		if !slices.Contains(a, p) {
			a = append(a, p)
		}
	}
	return a
}
