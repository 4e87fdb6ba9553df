package approvals

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// FleetPolicy is the HostPolicy of a real deployment: the Policy, told
// each host's groups, and which SSH hosts can hold what it allows.
type FleetPolicy struct {
	Policy    *policy.Policy
	Inventory *hosts.Inventory
	// Sandboxes, when set, finds the SSH hosts that have no sandbox for
	// the commands that run without approval while their remote_sandbox
	// is required (a *hosts.Pool): what the policy allows there needs
	// approval instead. Nil: no SSH hosts.
	Sandboxes RemoteSandboxes
}

// RemoteSandboxes says whether an SSH host lacks the sandbox its
// remote_sandbox requires; *hosts.Pool is one.
type RemoteSandboxes interface {
	// MissingSandbox is an error saying how to fix the host when it has
	// none and must, else nil; it may connect to the host.
	MissingSandbox(ctx context.Context, h hosts.Host) error
}

var (
	_ HostPolicy      = FleetPolicy{}
	_ RemoteSandboxes = (*hosts.Pool)(nil)
)

// sandboxProbeBound bounds how long a decision waits for a host to say
// which sandbox it has (a connect and one short command, once per
// connection).
const sandboxProbeBound = 30 * time.Second

// Check classifies command for host: the policy decides, and an allow on
// an SSH host that cannot sandbox it (under remote_sandbox: required)
// becomes approve, with the reason and the fix.
func (p FleetPolicy) Check(host, command string) HostDecision {
	t := policy.Target{Host: host}
	h, known := p.Inventory.Lookup(host)
	if known {
		t.Groups = h.Groups
	}
	d := p.Policy.Check(t, command)
	hd := HostDecision{Action: d.Action, Reasons: d.Reasons, ConnectPorts: d.ConnectPorts()}
	if d.Action != policy.Allow {
		return hd
	}
	if known && !h.IsLocal() && p.Sandboxes != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeBound)
		defer cancel()
		if err := p.Sandboxes.MissingSandbox(ctx, h); err != nil {
			return HostDecision{Action: policy.Approve, Reasons: append([]string{err.Error()}, d.Reasons...)}
		}
	}
	hd.Hidden = p.Policy.SecretPaths()
	return hd
}

// Decision is the policy's decision on command for host, in a word
// ("allow", "approve", "deny"): what the audit trail records with each
// command (the executors' Decider).
func (p FleetPolicy) Decision(host, command string) string {
	return p.Check(host, command).Action.String()
}
