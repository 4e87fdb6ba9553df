package checks

import (
	"strings"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

// Policy says whether a command may run on a host without approval;
// PolicyOf adapts the approvals policy.
type Policy interface {
	// Allowed reports whether command runs on h without a person's
	// approval; when not, reason says why in plain words.
	Allowed(h hosts.Host, command string) (ok bool, reason string)
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(h hosts.Host, command string) (bool, string)

// Allowed calls f.
func (f PolicyFunc) Allowed(h hosts.Host, command string) (bool, string) { return f(h, command) }

// PolicyOf is the approvals policy as a Policy: only an "allow" decision
// lets a check run.
func PolicyOf(p *approvals.Policy) Policy {
	return PolicyFunc(func(h hosts.Host, command string) (bool, string) {
		d := p.Check(approvals.Target{Host: h.Name, Groups: h.Groups}, command)
		if d.Action == approvals.Allow {
			return true, ""
		}
		why := "the policy says " + d.Action.String()
		if len(d.Reasons) > 0 {
			why += ": " + strings.Join(d.Reasons, "; ")
		}
		return false, why
	})
}
