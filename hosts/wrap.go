package hosts

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// killAfter is how long a command may outlive the SIGTERM of its deadline
// before SIGKILL; the `-k` of timeout(1).
const killAfter = 5 * time.Second

// shellQuote single-quotes s for a POSIX shell: the only character a
// single-quoted string cannot hold is the quote itself, which is closed,
// escaped and reopened (quote, backslash, quote, quote).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// newToken returns a random marker that names one run on a host.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RunnerShell is the shell every command runs under, on SSH hosts and on
// the bot's own host. The policy (package approvals) parses commands in
// this shell's dialect, so the command that is classified is the command
// that runs, byte for byte: a dialect mismatch is a bypass. Under dash, the
// /bin/sh of Debian and Ubuntu, this line is three commands, while bash
// (and the policy) read one echo:
//
//	echo $'\'' ' ; rm -rf /srv ; echo ' \'
//
// Why bash rather than parsing sh -c strings as POSIX: the commands people
// and models write are bash (arrays, [[ ]], $'…', <(…)), and a POSIX-only
// policy would send all of them to a person; bash is on every mainstream
// Linux server, and where it is missing the wrapper says so instead of
// running the command under another shell.
const RunnerShell = "bash"

// bashMissing is what the wrapper prints, and exitBashMissing the status it
// exits with (126: found but cannot run), on a host without bash.
const (
	bashMissing     = "opsbot: bash is required on this host: commands run with bash -c"
	exitBashMissing = 126
)

// shellEnv are removed from the command's environment: bash reads them at
// start-up, so a host's value could run a file before the command
// (BASH_ENV, ENV) or change how bash parses it (SHELLOPTS, BASHOPTS, e.g.
// extglob or posix), and the parse would no longer be the policy's.
var shellEnv = []string{"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT"}

// quietEnv are set for every command: tools that write "optional" state
// while reading, which a read-only command must not (the policy allows
// `git status`, which otherwise rewrites .git/index when its file-status
// cache is stale).
var quietEnv = []string{"GIT_OPTIONAL_LOCKS=0"}

// remoteCommand is the line the remote login shell runs for command.
//
//	echo opsbot-pid:TOKEN:$$ >&2; command -v bash >/dev/null 2>&1 || { echo 'opsbot: bash is required…' >&2; exit 126; };
//	cd DIR && exec env -u BASH_ENV … K=V timeout -k 5s Ns bash -c 'COMMAND' opsbot-run-TOKEN
//
// Why each part:
//   - sshd starts the session's shell as a session (and process group)
//     leader and `exec` keeps that pid, so the pid printed first names the
//     command's whole process group; cancelling kills it through a second
//     session for servers that ignore signal requests (OpenSSH < 7.9).
//   - the wrapper itself is POSIX sh (the login shell may be dash, bash,
//     zsh or ksh); `command -v` checks for bash in the same round trip, so
//     a host without it fails with a clear message, never with the command
//     run by another shell that would read it differently (RunnerShell).
//   - timeout(1) enforces the deadline on the host itself: the command
//     dies on time even if the bot is gone. It signals its whole process
//     group, and SIGKILLs it 5 s after the SIGTERM.
//   - the command runs under `bash -c` as one single-quoted word, so no
//     quoting of the caller's command can escape; opsbot-run-TOKEN is its
//     $0, which makes the run findable with `pgrep -f`.
//
// With box (RemoteBwrap, for a command no person approved) the command
// runs inside bubblewrap: the wrapper first collects the masks of the
// policy's secret paths that exist (maskScript) into "$@", then runs
// `timeout … bwrap OPTIONS "$@" -- bash -c 'COMMAND'` (bwrapArgs). The pid
// line, the deadline and the kill keep their meaning: bwrap is in the
// process group the kill signals, and the command's own processes die
// with it (its pid namespace ends).
func remoteCommand(command string, o Options, token string, box bool) string {
	if !box {
		return wrapLine(command, o, token, "")
	}
	return wrapLine(command, o, token, bwrapPrefix(o))
}

// markedCommand is remoteCommand inside bubblewrap, with proof that the
// sandbox started: inside it, before the command, a shell prints
// boxMarker(token) on stderr and then execs `bash -c 'COMMAND'
// opsbot-run-TOKEN` as before (same argv, same environment). The marker
// comes from inside the sandbox, so seeing it proves bubblewrap works on
// the host with the options every sandboxed command uses; missing, it
// proves the command never started (see Pool.foldedRun).
func markedCommand(command string, o Options, token string) string {
	inner := "echo " + boxMarker(token) + ` >&2; exec "$@"`
	return wrapLine(command, o, token, bwrapPrefix(o)+"/bin/sh -c "+shellQuote(inner)+" sh ")
}

// boxMarker is the line markedCommand prints from inside the sandbox.
func boxMarker(token string) string { return "opsbot-box:" + token }

// bwrapPrefix is `bwrap OPTIONS "$@" -- `: the masks are in "$@".
func bwrapPrefix(o Options) string {
	return strings.Join(bwrapArgs(o.Sandbox != nil && len(o.Sandbox.ConnectPorts) > 0), " ") + ` "$@" -- `
}

// wrapLine is the wrapper around command; bwrap, when not empty, is the
// bwrapPrefix (and what follows it) the command runs under.
func wrapLine(command string, o Options, token, bwrap string) string {
	var b strings.Builder
	b.WriteString("echo opsbot-pid:" + token + ":$$ >&2; ")
	b.WriteString("command -v " + RunnerShell + " >/dev/null 2>&1 || { echo " + shellQuote(bashMissing) + " >&2; exit " + strconv.Itoa(exitBashMissing) + "; }; ")
	if bwrap == "" {
		b.WriteString(execLine(command, o, token, ""))
		return b.String()
	}
	// The masks are collected by /bin/sh whatever the login shell is: zsh,
	// for one, fails a whole line on a wildcard that matches nothing.
	b.WriteString("exec /bin/sh -c " + shellQuote(sandboxSetup(command, o)+execLine(command, o, token, bwrap)))
	return b.String()
}

// execLine is `[cd DIR &&] exec env … timeout … [BWRAP] bash -c 'COMMAND'
// opsbot-run-TOKEN`, the part of the wrapper that becomes the command.
func execLine(command string, o Options, token, bwrap string) string {
	var b strings.Builder
	if o.Dir != "" {
		b.WriteString("cd " + shellQuote(o.Dir) + " && ")
	}
	b.WriteString("exec env")
	for _, name := range shellEnv {
		b.WriteString(" -u " + name)
	}
	for _, kv := range append(slices.Clone(quietEnv), o.Env...) {
		b.WriteString(" " + shellQuote(kv))
	}
	b.WriteString(" timeout -k " + seconds(killAfter) + " " + seconds(o.Timeout) + " " + bwrap + RunnerShell + " -c ")
	b.WriteString(shellQuote(command) + " " + shellQuote("opsbot-run-"+token))
	return b.String()
}

// seconds formats d for timeout(1), e.g. "60s", "0.25s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// pidWriter passes a stream through, removing the "opsbot-pid:TOKEN:PID"
// line the wrapper prints and remembering PID. Lines before it (a noisy
// login shell) pass through unchanged.
type pidWriter struct {
	w      io.Writer
	prefix []byte
	line   []byte // partial line while still looking
	found  bool
	pid    atomic.Int64
	seen   chan struct{} // closed when pid is known
}

// maxPIDScan bounds how much output is searched for the pid line.
const maxPIDScan = 4096

func newPIDWriter(w io.Writer, token string) *pidWriter {
	return &pidWriter{w: w, prefix: []byte("opsbot-pid:" + token + ":"), seen: make(chan struct{})}
}

func (p *pidWriter) Write(b []byte) (int, error) {
	n := len(b)
	for !p.found && len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.line = append(p.line, b...)
			if len(p.line) > maxPIDScan {
				p.found = true // give up looking; pass everything on
				return n, p.flush()
			}
			return n, nil
		}
		p.line = append(p.line, b[:i+1]...)
		b = b[i+1:]
		if rest, ok := bytes.CutPrefix(p.line, p.prefix); ok {
			pid, _ := strconv.ParseInt(string(bytes.TrimRight(rest, "\r\n")), 10, 64)
			p.pid.Store(pid)
			p.found, p.line = true, nil
			close(p.seen)
		} else if err := p.flush(); err != nil {
			return n, err
		}
	}
	if len(b) == 0 {
		return n, nil
	}
	_, err := p.w.Write(b)
	return n, err
}

func (p *pidWriter) flush() error {
	line := p.line
	p.line = nil
	if len(line) == 0 {
		return nil
	}
	_, err := p.w.Write(line)
	return err
}

// finish passes on a partial line still held when the stream ends. Call it
// after the stream's last Write.
func (p *pidWriter) finish() error {
	if p.found {
		return nil
	}
	return p.flush()
}
