package hosts

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Runner runs one command on one host. Pool (SSH), Local (the bot's own
// machine) and Fleet (either, by host) implement it.
//
// Run streams the output to onChunk (may be nil) while the command runs and
// returns when it has ended. A nil error means the command ran and ended
// in a known way — exit code, signal or its deadline (Result.TimedOut); a
// non-zero exit is not an error. An error means the command could not be
// started (unreachable host, refused host key, failed authentication) or
// its end is unknown (connection lost, ctx cancelled); the Result then
// holds what output arrived. When ctx is cancelled the command is killed
// and the error wraps ctx.Err().
type Runner interface {
	Run(ctx context.Context, host Host, command string, opts Options, onChunk func(Chunk)) (Result, error)
}

// RunnerFunc adapts a function to the Runner interface (handy for fakes).
type RunnerFunc func(ctx context.Context, host Host, command string, opts Options, onChunk func(Chunk)) (Result, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, host Host, command string, opts Options, onChunk func(Chunk)) (Result, error) {
	return f(ctx, host, command, opts, onChunk)
}

// Options tune one command. The zero value is valid: the defaults of the
// `exec` config section apply.
type Options struct {
	// Timeout is the command's deadline (default exec.timeout, 60s). At
	// the deadline the command's process group gets SIGTERM, then SIGKILL
	// 5 s later. On SSH hosts the deadline is enforced on the host itself,
	// so it holds even if the bot disappears.
	Timeout time.Duration
	// Dir is the working directory; empty means the login directory on an
	// SSH host and Local.Dir on the local host.
	Dir string
	// Env sets environment variables ("NAME=value") for the command.
	// These, and for the local host the variables named by
	// Local.AllowEnv, are all the command gets from the bot: the bot's own
	// environment (and its secrets) is never passed through.
	Env []string
	// Stdin is the command's standard input (default: empty). It must
	// reach EOF or the command end; reading stops when the command ends.
	Stdin io.Reader
	// PTY runs the command on a pseudo-terminal (stderr then arrives
	// merged into stdout, with CRLF line ends).
	PTY bool
	// OutputLimit caps the output kept in Result.Output (default
	// exec.output_limit, 1 MiB): the first half and the last half, with a
	// marker between. Chunks are streamed whole regardless.
	OutputLimit int
	// Sandbox, when set, marks a command that runs without a person's
	// approval: set it for every such command. On the bot's own host it
	// confines the command; on an SSH host the command runs as the host's
	// readonly_user (or ssh.readonly_user) when one is set, over a
	// connection of its own. An approved command leaves it nil and runs as
	// the normal user.
	Sandbox *Sandbox
	// Hidden are the policy's secret paths (Confinement.Hidden): the
	// sandbox of a command with Sandbox set masks each that exists (on
	// SSH hosts with bubblewrap, see maskScript).
	Hidden []string
	// Scheduled marks a health check an operator wrote in the config
	// (Confinement.Scheduled): on an SSH host without a sandbox it runs
	// unconfined even under remote_sandbox: required, since a scheduled
	// report must never wait for a person.
	Scheduled bool
	// Approval is the approval the run claimed (Confinement.Approval),
	// for the Tracker (Process.Approval).
	Approval string
}

// withDefaults fills the zero fields from the exec config.
func (o Options) withDefaults(e ExecConfig) Options {
	e = e.WithDefaults()
	setDefault(&o.Timeout, e.Timeout)
	setDefault(&o.OutputLimit, e.OutputLimit)
	return o
}

// validate refuses options that cannot be passed safely.
func (o Options) validate() error {
	if o.Timeout < 0 || o.OutputLimit < 0 {
		return fmt.Errorf("negative timeout or output limit")
	}
	for _, kv := range o.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !validEnvName(name) {
			return fmt.Errorf("environment entry %q is not NAME=value with NAME of letters, digits and _", kv)
		}
		if slices.Contains(shellEnv, name) {
			return fmt.Errorf("environment entry %q would change how bash starts or reads the command; leave %s out", kv, name)
		}
	}
	return nil
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Stream tells a command's stdout from its stderr.
type Stream uint8

// The two output streams.
const (
	Stdout Stream = iota + 1
	Stderr
)

// String is "stdout" or "stderr".
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return fmt.Sprintf("Stream(%d)", uint8(s))
}

// Chunk is a piece of output, delivered while the command runs. Data is
// only valid during the callback: copy it to keep it.
type Chunk struct {
	Host   string
	Stream Stream
	Data   []byte
}

// Result is how a command ended.
type Result struct {
	// Host is the host's name.
	Host string
	// ExitCode is the exit status; 128+N when killed by signal N, 124
	// when stopped at its deadline, -1 when unknown (see Run's error).
	ExitCode int
	// Signal names the signal that killed the command ("TERM", "KILL"),
	// or is empty.
	Signal string
	// TimedOut is set when the command was stopped at its deadline.
	TimedOut bool
	// Duration is the wall time from start to end as the bot saw it.
	Duration time.Duration
	// Output is stdout and stderr interleaved as they arrived, capped at
	// Options.OutputLimit (head and tail with a marker between).
	Output []byte
	// Truncated is set when Output lost bytes to the cap.
	Truncated bool
	// OutputBytes counts every byte the command printed.
	OutputBytes int64
}

// OK reports whether the command exited 0 before its deadline.
func (r Result) OK() bool { return r.ExitCode == 0 && !r.TimedOut }

// Status is a short human description: "exit 0", "exit 2",
// "killed by KILL", "timed out after 1m0s".
func (r Result) Status() string {
	switch {
	case r.TimedOut:
		return "timed out after " + r.Duration.Round(time.Millisecond).String()
	case r.Signal != "":
		return "killed by " + r.Signal
	case r.ExitCode < 0:
		return "exit status unknown"
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}
