package hosts

import (
	"fmt"
	"strings"
)

// RemoteSandbox is what holds a command that runs without a person's
// approval on an SSH host: what the host has, found by a probe over the
// connection such commands use (Pool.RemoteSandbox).
type RemoteSandbox string

// What an SSH host can hold unapproved commands with, best first.
const (
	// RemoteBwrap is bubblewrap run through the SSH session: the root
	// file system read-only, a private /tmp, the policy's secret paths
	// masked, no capabilities, its own pid namespace (nothing it starts
	// outlives it) and no network unless the policy allowed a
	// destination. See remoteSandboxCommand.
	RemoteBwrap RemoteSandbox = "bwrap"
	// RemoteReadOnlyUser is the host's readonly_user (or
	// ssh.readonly_user): the account's own rights are the only limit.
	RemoteReadOnlyUser RemoteSandbox = "readonly_user"
	// RemoteNone is neither: under remote_sandbox: required, what the
	// policy allows there needs approval instead.
	RemoteNone RemoteSandbox = "none"
)

// The values of remote_sandbox (policy.remote_sandbox, a host's own
// remote_sandbox in the inventory): what happens to a command the policy
// allows without approval on a host that has no sandbox (RemoteNone).
const (
	// RemoteSandboxRequired (the default) makes it wait for approval.
	RemoteSandboxRequired = "required"
	// RemoteSandboxBestEffort runs it as the login user, unconfined.
	RemoteSandboxBestEffort = "best_effort"
)

// validRemoteSandboxMode says whether s is a remote_sandbox value; empty
// means the default.
func validRemoteSandboxMode(s string) bool {
	return s == "" || s == RemoteSandboxRequired || s == RemoteSandboxBestEffort
}

// NoSandboxError says a host has no sandbox for the commands that run
// without approval and its remote_sandbox is required: the command did not
// run. Its text tells the operator how to fix the host.
type NoSandboxError struct {
	Host string
	// Why bubblewrap did not work there, in the host's words.
	Why string
}

func (e *NoSandboxError) Error() string {
	return fmt.Sprintf("no sandbox on %s for commands that run without approval (bubblewrap: %s; no readonly_user set): "+
		"install bubblewrap there (package bubblewrap) or set ssh.readonly_user (or the host's readonly_user); "+
		"policy.remote_sandbox: best_effort runs such commands unconfined", e.Host, e.Why)
}

// bwrapArgs are bubblewrap's options for every sandboxed command:
//   - `--ro-bind / /`: the whole file system, read-only;
//   - `--dev /dev`: a minimal /dev (null, zero, random, tty…), so that no
//     disk or memory device is reachable (a read-only mount does not stop
//     writes to a device node, and root owns them);
//   - `--ro-bind /proc /proc`: the host's /proc, so ps, top, pgrep and
//     lsof see the host's processes; read-only, so /proc/sys and
//     /proc/sysrq-trigger cannot be written (root owns them, and writing
//     them needs no capability);
//   - `--unshare-pid`, `--die-with-parent`, `--new-session`: the command's
//     processes live in a pid namespace of their own, which ends with the
//     command (or with bwrap, should timeout(1) or a cancel kill it), so
//     nothing it starts survives it; host processes are visible in /proc
//     but cannot be signalled, reniced or traced (kill(2) looks pids up
//     in the caller's namespace); the new session keeps it off the pty's
//     input queue (TIOCSTI);
//   - `--tmpfs /tmp`: a private writable /tmp, gone when it ends;
//   - `--cap-drop ALL`: no capabilities, even as root, so root's
//     DAC_OVERRIDE, SYS_PTRACE (other processes' environ, mem, fds),
//     SYS_ADMIN, NET_ADMIN and the rest are gone;
//   - `--unshare-net` unless the policy allowed the command a network
//     destination: a network namespace with only a loopback, so no
//     egress (ss and ip then show that namespace, not the host's).
func bwrapArgs(network bool) []string {
	args := []string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--ro-bind", "/proc", "/proc",
		"--unshare-pid", "--die-with-parent", "--new-session", "--tmpfs", "/tmp", "--cap-drop", "ALL"}
	if !network {
		args = append(args, "--unshare-net")
	}
	return args
}

// maskScript is the POSIX sh that adds, to the positional parameters, a
// bwrap mask for each of the policy's secret paths that exists on the host
// now: an unreadable empty file (/dev/null on a nodev mount) over a file,
// an empty read-only tmpfs over a directory. The shell expands the
// wildcards and home directories at run time; its results are only ever
// used as "$f", one word, never parsed again, so a file name cannot inject
// shell. A symlink is masked where it leads (bwrap would otherwise follow
// it outside the new root and mask nothing).
//
// Directories are remounted read-only in a second pass, after every mask
// is in place: a mask inside a masked directory needs its mount point
// created first.
func maskScript(hidden []string) string { return maskScriptWith(hidden, "") }

// maskScriptWith is maskScript with more sh, which adds masks of its own
// to "$@", run between the masks and the remounts (see scannedMasks).
func maskScriptWith(hidden []string, more string) string {
	words := maskWords(hidden)
	if len(words) == 0 {
		return "set --; " + more
	}
	list := strings.Join(words, " ")
	return "set --; for f in " + list + "; do " + resolveLink +
		`if [ -d "$f" ]; then set -- "$@" --tmpfs "$f"; elif [ -e "$f" ]; then set -- "$@" --ro-bind /dev/null "$f"; fi; done; ` + more +
		"for f in " + list + "; do " + resolveLink + `if [ -d "$f" ]; then set -- "$@" --remount-ro "$f"; fi; done; `
}

// resolveLink replaces $f, when it exists, by its absolute path with every
// symlink resolved: its own, and any of its parents' (/var/run/secrets is
// /run/secrets, and a mask bwrap tries to make under the link /var/run
// fails, with it every sandboxed command).
const resolveLink = `if [ -e "$f" ] || [ -L "$f" ]; then f=$(readlink -f -- "$f") || continue; case $f in /*) ;; *) continue;; esac; fi; `

// maskWords turns the policy's secret path entries into shell words whose
// expansion is the paths to mask:
//   - "/abs/path": itself (wildcards expanded);
//   - "~/rest": rest under /root, every /home/* and the login user's
//     $HOME;
//   - a bare file name: that name in each of those home directories and
//     their .ssh (a bare name means "in any directory", which no mount
//     list can hold; the classifier still refuses it everywhere).
//
// Entries under /proc and /dev are left out: the sandbox's own /dev has no
// such devices, and other processes' /proc files are closed by the
// dropped capabilities (ptrace access checks), not by masks.
func maskWords(hidden []string) []string {
	homes := []string{"/root/", "/home/*/", `"$HOME"/`}
	var words []string
	for _, e := range hidden {
		switch {
		case e == "" || strings.Contains(e, "\x00"):
		case strings.HasPrefix(e, "/proc/") || strings.HasPrefix(e, "/dev/") || e == "/proc" || e == "/dev":
		case strings.HasPrefix(e, "/"):
			words = append(words, globWord(e))
		case strings.HasPrefix(e, "~/"):
			for _, h := range homes {
				words = append(words, h+globWord(strings.TrimPrefix(e, "~/")))
			}
		case !strings.Contains(e, "/"):
			for _, h := range homes {
				words = append(words, h+globWord(e), h+".ssh/"+globWord(e))
			}
		}
	}
	return words
}

// globWord is pattern as one shell word: its * and ? stay wildcards, a
// [...] class whose content is plain letters, digits, '-', '_', '.', '!'
// or '^' stays a class, and everything else is single-quoted, literal.
func globWord(pattern string) string {
	var b, lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			b.WriteString(shellQuote(lit.String()))
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' || c == '?':
			flush()
			b.WriteByte(c)
		case c == '[':
			if n := plainClass(pattern[i:]); n > 0 {
				flush()
				b.WriteString(pattern[i : i+n])
				i += n - 1
				continue
			}
			lit.WriteByte(c)
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return b.String()
}

// plainClass is the length of the bracket expression that starts s, when
// it holds only characters that mean nothing else to the shell; else 0.
func plainClass(s string) int {
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ']' && i > 1:
			return i + 1
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-_.!^", c) >= 0:
		default:
			return 0
		}
	}
	return 0
}
