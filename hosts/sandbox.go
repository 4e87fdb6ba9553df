package hosts

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// Sandbox confines a command on the bot's own host (Options.Sandbox): it
// is how a command that runs without a person's approval is held to what
// "read-only" means, so that a mistake of the policy's classifier is not a
// breach. Under it the command
//   - reads and executes anything the bot's user may, and writes nowhere
//     but a private temporary directory made for it alone ($TMPDIR, removed
//     when it ends) and /dev/null, /dev/zero, /dev/full and /dev/tty;
//   - may neither bind a TCP port nor connect to one, except the
//     ConnectPorts;
//   - cannot signal processes outside it, nor reach abstract UNIX sockets
//     outside it.
//
// On Linux this is Landlock (ABI 4 or later, Linux 6.7+); see
// SandboxSupport. SSH hosts ignore it: there, least privilege is the remote
// account's business.
type Sandbox struct {
	// ConnectPorts are the TCP ports the command may connect to, on any
	// address (Landlock rules are per port): those of the network
	// destinations the policy allowed. Empty: no TCP connect at all.
	ConnectPorts []uint16
}

// ErrNoSandbox is wrapped by Local.Run's error when a command asks for
// the sandbox and this kernel cannot give it (and Local.SandboxBestEffort
// is off): the command did not run.
var ErrNoSandbox = errors.New("the sandbox for commands that run without approval is not available on the bot's host")

// SandboxSupport reports whether this machine can run the sandbox: nil,
// or why not, in words for an operator. It asks the kernel once.
func SandboxSupport() error { return sandboxSupportOnce() }

var sandboxSupportOnce = sync.OnceValue(sandboxSupport)

// confine makes cmd run inside sb: through the sandbox launcher (this same
// binary, see sandboxArg) in a fresh private temporary directory. The
// returned cleanup removes that directory once the command has ended.
// Without kernel support it refuses, or with SandboxBestEffort leaves cmd
// as it is.
func (l *Local) confine(cmd *exec.Cmd, sb *Sandbox) (cleanup func(), err error) {
	probe := l.probe
	if probe == nil {
		probe = SandboxSupport
	}
	if err := probe(); err != nil {
		if l.SandboxBestEffort {
			return func() {}, nil
		}
		return nil, fmt.Errorf("%w (%v), so the command did not run", ErrNoSandbox, err)
	}
	if cmd.Err != nil { // the shell was not found
		return nil, cmd.Err
	}
	dir, err := os.MkdirTemp(l.SandboxDir, "opsbot-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private directory: %w", err)
	}
	cmd.Args = slices.Concat(launcherArgs(dir, sb), []string{cmd.Path}, cmd.Args)
	cmd.Path = launcherPath
	cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+dir)
	return func() { _ = os.RemoveAll(dir) }, nil
}

// launcherArgs is the launcher's argv up to the command: `opsbot
// __opsbot-sandbox__ --rw DIR [--connect PORT]… --`; the program's path
// and argv follow.
func launcherArgs(dir string, sb *Sandbox) []string {
	args := []string{"opsbot-sandbox", sandboxArg, "--rw", dir}
	for _, p := range sb.ConnectPorts {
		args = append(args, "--connect", fmt.Sprint(p))
	}
	return append(args, "--")
}
