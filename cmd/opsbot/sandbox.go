package main

import (
	"log/slog"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// sandboxState is what the bot's host does with the commands the policy
// allows without approval: confine them with Landlock or, on a kernel
// without it, what policy.sandbox says instead.
type sandboxState struct {
	mode    string // policy.SandboxRequired or SandboxBestEffort
	missing error  // nil: the sandbox is in force
	// partial: the sandbox runs without its mount namespace (no user
	// namespaces for a bot that is not root), so secret paths are not
	// masked; nil when it has it.
	partial error
}

// newSandboxState asks probe (hosts.SandboxSupport) and isolation
// (hosts.SandboxIsolation) once.
func newSandboxState(cfg policy.PolicyConfig, probe, isolation func() error) sandboxState {
	s := sandboxState{mode: cfg.SandboxMode(), missing: probe()}
	if s.missing == nil {
		s.partial = isolation()
	}
	return s
}

// apply makes the policy and the local runner keep to the state: without
// the sandbox, under required, what the policy allows on the bot's host
// needs approval; under best_effort, it runs unconfined.
func (s sandboxState) apply(p *policy.Policy, local *hosts.Local) *policy.Policy {
	if s.missing == nil {
		return p
	}
	if s.mode == policy.SandboxBestEffort {
		local.SandboxBestEffort = true
		return p
	}
	return p.WithoutSandbox(hosts.LocalHost, s.missing.Error())
}

// status is the sandbox's line for /readyz and the start-up log: ok when
// the sandbox is in force. Its absence does not make the bot unready: the
// bot then asks for approval instead (or, best effort, runs unconfined).
func (s sandboxState) status() (ok bool, detail string) {
	switch {
	case s.missing == nil && s.partial != nil:
		return true, "sandbox: commands that run without approval on the bot's host are confined by Landlock (no writes, no capabilities, nothing left running, no network but the destinations the policy allowed) but WITHOUT a mount namespace (" + s.partial.Error() + "): secret paths are not masked, and the mode and times of files the bot's user owns stay changeable"
	case s.missing == nil:
		return true, "sandbox: commands that run without approval on the bot's host are confined by Landlock and a mount namespace (read-only file system, secret paths masked, no capabilities, nothing left running, no network but the destinations the policy allowed)"
	case s.mode == policy.SandboxBestEffort:
		return false, "sandbox: not available on the bot's host (" + s.missing.Error() + "); commands the policy allows there run WITHOUT it (policy.sandbox: best_effort)"
	}
	return false, "sandbox: not available on the bot's host (" + s.missing.Error() + "); commands the policy allows there wait for approval instead (policy.sandbox: required; best_effort runs them without the sandbox)"
}

// logStart says once, at start, what the sandbox state means.
func (s sandboxState) logStart(log *slog.Logger) {
	ok, detail := s.status()
	if ok && s.partial == nil {
		// Said at Info: an operator reading the start-up log sees that
		// the layer is on, not only when it is missing.
		log.Info(detail)
		return
	}
	log.Warn(detail)
}
