package checks

import (
	"strings"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// Policy says whether a command may run on a host without approval;
// PolicyOf adapts the classifier, package policy.
type Policy interface {
	// Allowed reports whether command runs on h without a person's
	// approval; when not, reason says why in plain words.
	Allowed(h hosts.Host, command string) (ok bool, reason string)
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(h hosts.Host, command string) (bool, string)

// Allowed calls f.
func (f PolicyFunc) Allowed(h hosts.Host, command string) (bool, string) { return f(h, command) }

// PolicyOf is the classifier (package policy) as a Policy: only an "allow" decision
// lets a check run. It is also a Sandboxer.
func PolicyOf(p *policy.Policy) Policy { return classifier{p} }

type classifier struct{ p *policy.Policy }

var _ Sandboxer = classifier{}

func (a classifier) Allowed(h hosts.Host, command string) (bool, string) {
	d := a.p.Check(policy.Target{Host: h.Name, Groups: h.Groups}, command)
	if d.Action == policy.Allow {
		return true, ""
	}
	why := "the policy says " + d.Action.String()
	if len(d.Reasons) > 0 {
		why += ": " + strings.Join(d.Reasons, "; ")
	}
	return false, why
}

// ConnectPorts are the TCP ports the allowed command may connect to.
func (a classifier) ConnectPorts(h hosts.Host, command string) []uint16 {
	return a.p.Check(policy.Target{Host: h.Name, Groups: h.Groups}, command).ConnectPorts()
}

// Sandboxer is a Policy that also names the TCP ports an allowed command
// may connect to from its sandbox. A check runs without a person, so on
// the bot's host it always runs in the sandbox (hosts.Sandbox); with a
// Policy that is not a Sandboxer, it may connect nowhere.
type Sandboxer interface {
	ConnectPorts(h hosts.Host, command string) []uint16
}

// SecretPaths are the policy's secret paths, which a check's sandbox
// masks (hosts.Options.Hidden).
func (a classifier) SecretPaths() []string { return a.p.SecretPaths() }

// secretPather is a Policy that names the secret paths to mask.
type secretPather interface{ SecretPaths() []string }

// unattended is o for a check's run: a check runs without a person, so in
// the sandbox of its host (hosts.Sandbox on the bot's host, bubblewrap on
// an SSH host that has it), with the policy's secret paths masked and the
// environment of unattended commands (policy.UnattendedEnv); marked
// Scheduled, so that on an SSH host with no sandbox it still runs (under
// remote_sandbox: required a chat command there would wait for approval;
// a scheduled report must not).
func unattended(p Policy, h hosts.Host, command string, o hosts.Options) hosts.Options {
	o.Sandbox = &hosts.Sandbox{}
	if s, ok := p.(Sandboxer); ok {
		o.Sandbox.ConnectPorts = s.ConnectPorts(h, command)
	}
	if s, ok := p.(secretPather); ok {
		o.Hidden = s.SecretPaths()
	}
	o.Env, o.Scheduled = policy.UnattendedEnv(), true
	return o
}
