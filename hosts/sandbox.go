package hosts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Sandbox confines a command on the bot's own host (Options.Sandbox): it
// is how a command that runs without a person's approval is held to what
// "read-only" means, so that a mistake of the policy's classifier is not a
// breach. Under it the command
//   - reads and executes anything the bot's user may but the Hidden
//     paths, and writes nowhere but a private temporary directory made
//     for it alone ($TMPDIR, removed when it ends) and /dev/null,
//     /dev/zero, /dev/full and /dev/tty: not even a file's mode, owner,
//     times or extended attributes (the file system is mounted read-only);
//   - holds no capability (even as root), so it can change neither the
//     host's name nor another user's files, and gains none from setuid
//     programs (no_new_privs);
//   - sees the host's processes (ps, top) but cannot renice, limit,
//     signal or trace them, nor read their environment, and leaves
//     nothing running when it returns;
//   - may neither bind a TCP port nor connect to one, except the
//     ConnectPorts, nor reach abstract UNIX sockets outside it.
//
// On Linux this is Landlock (ABI 4 or later, Linux 6.7+; see
// SandboxSupport), seccomp, and a mount namespace (see SandboxIsolation).
// On SSH hosts it means the host's own sandbox instead: bubblewrap where
// the host has it, else the read-only account (see remote_sandbox.go).
type Sandbox struct {
	// ConnectPorts are the TCP ports the command may connect to, on any
	// address (Landlock rules are per port): those of the network
	// destinations the policy allowed. Empty: no TCP connect at all.
	ConnectPorts []uint16
	// Hidden are the policy's secret paths, entries as in
	// policy.secret_paths (absolute, ~/ paths, bare file names, with
	// wildcards): each that exists is masked in the command's view of the
	// file system (see hiddenPaths for where they are looked for).
	Hidden []string
	// Env are added to the command's environment ("NAME=value").
	Env []string
}

// ErrNoSandbox is wrapped by Local.Run's error when a command asks for
// the sandbox and this kernel cannot give it (and Local.SandboxBestEffort
// is off): the command did not run.
var ErrNoSandbox = errors.New("the sandbox for commands that run without approval is not available on the bot's host")

// SandboxSupport reports whether this machine can run the sandbox: nil,
// or why not, in words for an operator. It asks the kernel once.
func SandboxSupport() error { return sandboxSupportOnce() }

var sandboxSupportOnce = sync.OnceValue(sandboxSupport)

// SandboxIsolation reports whether the sandbox can also give a command
// its own mount namespace: nil, or why not, in words for an operator.
// Without it (a bot that is not root, on a host where unprivileged user
// namespaces are off, or a container that forbids them) the sandbox still
// holds writes, TCP, signals, capabilities and leftovers, but secret
// paths are not masked, and the metadata of files the bot's user owns
// (mode, times, extended attributes) stays writable. It tries once,
// starting a launcher in that namespace.
func SandboxIsolation() error { _, err := isolationOnce(); return err }

// isolationOnce is the probe's verdict: whether the namespaces need a
// user namespace (a bot that is not root), and whether they work at all.
var isolationOnce = sync.OnceValues(probeIsolation)

// launch is one sandboxed command's set-up: its private directory, and
// the pipe on which the launcher reports a command killed by a signal
// (the launcher outlives signals to do its work: see supervise).
type launch struct {
	dir    string
	status *os.File // read end
	writer *os.File // write end, the launcher's fd 3
	ns     bool     // in a mount namespace
	userns bool     // in a user namespace too
}

// confine makes cmd run inside sb: through the sandbox launcher (this same
// binary, see sandboxArg) in a fresh private temporary directory. Call
// the result's isolate before cmd.Start, started after it, report once
// the command has ended, and cleanup at last. Without kernel support it refuses, or with SandboxBestEffort
// leaves cmd as it is but for sb.Env.
func (l *Local) confine(cmd *exec.Cmd, sb *Sandbox) (*launch, error) {
	cmd.Env = append(cmd.Env, sb.Env...)
	if err := l.support(); err != nil {
		if l.SandboxBestEffort {
			return &launch{}, nil
		}
		return nil, fmt.Errorf("%w (%v), so the command did not run", ErrNoSandbox, err)
	}
	if cmd.Err != nil { // the shell was not found
		return nil, cmd.Err
	}
	b := &launch{}
	b.userns, b.ns = l.isolation()
	var err error
	if b.dir, err = os.MkdirTemp(l.SandboxDir, "opsbot-sandbox-"); err != nil {
		return nil, fmt.Errorf("sandbox: private directory: %w", err)
	}
	if b.status, b.writer, err = os.Pipe(); err != nil {
		_ = os.RemoveAll(b.dir)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd.ExtraFiles = []*os.File{b.writer} // fd 3, statusFD
	cmd.Args = slices.Concat(launcherArgs(b.dir, sb, b.ns), []string{cmd.Path}, cmd.Args)
	cmd.Path = launcherPath
	cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+b.dir)
	return b, nil
}

// support is SandboxSupport, or the probe a test put in its place.
func (l *Local) support() error {
	if l.probe != nil {
		return l.probe()
	}
	return SandboxSupport()
}

// isolation says whether a command gets its namespaces, and whether it
// needs a user namespace for them.
func (l *Local) isolation() (userns, ok bool) {
	if l.isolationProbe != nil {
		return l.forceUserNS, l.isolationProbe() == nil
	}
	userns, err := isolationOnce()
	return userns || l.forceUserNS, err == nil
}

// isolate sets cmd's namespaces; call it once cmd's SysProcAttr is final
// but for this (a pty replaces it).
func (b *launch) isolate(cmd *exec.Cmd) {
	if b == nil || b.dir == "" {
		return
	}
	// The launcher ends the command and all it started on TERM; on KILL
	// it could not (see supervise).
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	if b.ns {
		namespaces(cmd.SysProcAttr, b.userns)
	}
}

// started closes the launcher's end of the status pipe in the bot.
func (b *launch) started() {
	if b != nil && b.writer != nil {
		_ = b.writer.Close()
	}
}

// report reads from the launcher how the command ended, into res: a
// signal that killed it. Call it once the command has ended.
func (b *launch) report(res *Result) {
	if b == nil || b.status == nil {
		return
	}
	b.started() // if Start failed
	msg, _ := io.ReadAll(io.LimitReader(b.status, 16))
	sig, err := strconv.Atoi(strings.TrimSpace(string(msg)))
	if err == nil && sig > 0 && !res.TimedOut && res.Signal == "" {
		res.ExitCode, res.Signal = 128+sig, signalName(syscall.Signal(sig))
	}
}

// cleanup closes the status pipe and removes the private directory.
func (b *launch) cleanup() {
	if b == nil || b.dir == "" {
		return
	}
	b.started()
	_ = b.status.Close()
	_ = os.RemoveAll(b.dir)
}

// launcherArgs is the launcher's argv up to the command: `opsbot
// __opsbot-sandbox__ --rw DIR [--connect PORT]… [--hide ENTRY]… [--ns]
// --`; the program's path and argv follow.
func launcherArgs(dir string, sb *Sandbox, ns bool) []string {
	args := []string{"opsbot-sandbox", sandboxArg, "--rw", dir}
	for _, p := range sb.ConnectPorts {
		args = append(args, "--connect", fmt.Sprint(p))
	}
	for _, h := range sb.Hidden {
		args = append(args, "--hide", h)
	}
	if ns {
		args = append(args, "--ns", "1")
	}
	return append(args, "--")
}
