package hosts

import (
	"context"
	"fmt"
	"time"
)

// Executor runs commands on named hosts of the fleet. It is the one
// contract between what decides a command may run (approvals.Guard) and
// what runs it: the agent's tools, the chat's `run`, background Jobs and
// `opsbot hosts exec` all run through one.
type Executor interface {
	// Resolve turns a target (NAME, group:NAME, a comma list) into hosts.
	Resolve(target string) ([]string, error)
	// Exec runs command on each host, concurrently, returning in host order.
	Exec(ctx context.Context, hosts []string, command string, opts ExecOptions) []ExecResult
}

// Confinement is how a command the Guard authorized runs on the bot's own
// host. The zero value is the strict one: nobody approved the run, so it
// runs in the sandbox (Sandbox) with no network.
type Confinement struct {
	// Approved says a person approved this run: it runs as the bot does,
	// outside the sandbox.
	Approved bool
	// ConnectPorts are the TCP ports the policy let an unapproved command
	// connect to.
	ConnectPorts []uint16
	// Hidden are the policy's secret paths (entries as in
	// policy.secret_paths: absolute paths, ~/ paths, bare file names, with
	// wildcards): the sandbox masks each that exists on the host, so an
	// unapproved command cannot read it whatever the classifier missed.
	Hidden []string
	// Env are set in an unapproved command's environment: they shut the
	// ways read-only tools run code named in files (git's config keys that
	// name commands, python's import path); see policy.UnattendedEnv.
	Env []string
	// Scheduled marks a health check an operator wrote in the config: it
	// runs sandboxed where the host has a sandbox, and where it has none it
	// runs as before (a scheduled report never waits for a click).
	Scheduled bool
	// Approval is the approval an Approved run claimed (its id), if one
	// is on record: the Tracker records it with the command as it starts
	// (Process.Approval), so that after a crash an approved command that
	// never started is told apart from one that ran.
	Approval string
}

// ExecOptions tunes one command run.
type ExecOptions struct {
	// Confinement comes from the Guard's Permit, never from the model.
	Confinement
	Timeout time.Duration
	Stdin   string
	// Dir applies to the local host only; SSH hosts run in their login
	// directory.
	Dir string
	// OnOutput, when set, receives output as it arrives.
	OnOutput func(host string, stderr bool, data []byte)
	// OnResult, when set, receives each host's result as soon as that
	// host is done, in completion order, before Exec returns them all:
	// a fan-out shows the hosts that answered while one that froze is
	// still held to its deadline (issue 28). Calls never overlap.
	OnResult func(ExecResult)
}

// ExecResult is one host's outcome.
type ExecResult struct {
	Host      string
	ExitCode  int
	Signal    string
	Stdout    string
	Stderr    string
	Duration  time.Duration
	Truncated bool
	Killed    bool  // by the deadline or a cancel
	Err       error // could not run at all (connect, auth, host key)
}

// Status is how the command ended, in a few words: "exit 0 in 12ms",
// "killed by TERM after 1m0s (timed out or cancelled)".
func (r ExecResult) Status() string {
	s := fmt.Sprintf("exit %d in %s", r.ExitCode, r.Duration.Round(time.Millisecond))
	if r.Signal != "" {
		s = fmt.Sprintf("killed by %s after %s", r.Signal, r.Duration.Round(time.Millisecond))
	}
	if r.Killed {
		s += " (timed out or cancelled)"
	}
	if r.Truncated {
		s += ", output truncated"
	}
	return s
}
