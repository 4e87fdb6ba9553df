package hosts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// DefaultAllowEnv are the variables of the bot's own environment a local
// command inherits when Local.AllowEnv is nil: enough for a shell to
// behave, none that usually hold secrets.
var DefaultAllowEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "TMPDIR"}

// Local runs commands on the bot's own machine with `bash -c`, in the same
// shape as Pool runs them remotely: its own process group, killed as a
// whole (SIGTERM, then SIGKILL 5 s later) at the deadline or on cancel,
// output streamed and capped the same way.
type Local struct {
	// Dir is the working directory of a command that sets none; empty
	// means the bot's own.
	Dir string
	// AllowEnv names the variables of the bot's environment passed on
	// (nil: DefaultAllowEnv). Options.Env adds to them.
	AllowEnv []string
	// Exec holds the defaults of timeout and output limit.
	Exec ExecConfig
	// Shell is the shell binary (default "bash").
	Shell string
	// SandboxDir is where a sandboxed command's private temporary
	// directory is made (default os.TempDir()).
	SandboxDir string
	// SandboxBestEffort runs a command that asks for the sandbox
	// (Options.Sandbox) without it when the kernel cannot give it
	// (policy.sandbox: best_effort). Off, such a command is refused with
	// ErrNoSandbox.
	SandboxBestEffort bool
	// probe replaces SandboxSupport in tests (a kernel without Landlock).
	probe func() error
	// isolationProbe replaces SandboxIsolation in tests (a host without
	// namespaces for the sandbox); forceUserNS makes a root bot use a user
	// namespace as one that is not root does.
	isolationProbe func() error
	forceUserNS    bool
	// Tracker, when set, records each command's process group while it
	// runs, for the start-up sweep after a crash (EndLocal).
	Tracker Tracker
}

var _ Runner = (*Local)(nil)

// NewLocal makes the local runner with cfg's exec defaults.
func NewLocal(cfg Config) *Local { return &Local{Exec: cfg.Exec.WithDefaults()} }

// Run runs command on the local host; h must be the local host. See
// Runner for the contract.
func (l *Local) Run(ctx context.Context, h Host, command string, opts Options, onChunk func(Chunk)) (Result, error) {
	res := Result{Host: LocalHost, ExitCode: -1}
	if !h.IsLocal() {
		return res, fmt.Errorf("hosts: %s: not the local host (SSH hosts run through hosts.Pool)", h.Name)
	}
	opts = opts.withDefaults(l.Exec)
	if err := opts.validate(); err != nil {
		return res, fmt.Errorf("hosts: local: %w", err)
	}
	out := newSink(LocalHost, opts.OutputLimit, onChunk)
	cmd := l.command(command, opts)
	var box *launch
	if opts.Sandbox != nil {
		var err error
		if box, err = l.confine(cmd, opts.Sandbox); err != nil {
			return res, fmt.Errorf("hosts: local: %w", err)
		}
		defer box.cleanup()
	}
	var tty *ptyOutput
	if opts.PTY {
		var err error
		if tty, err = attachPTY(cmd, out.writer(Stdout)); err != nil {
			return res, fmt.Errorf("hosts: local: pty: %w", err)
		}
	} else {
		cmd.Stdout, cmd.Stderr = out.writer(Stdout), out.writer(Stderr)
	}
	if g, ok := l.Tracker.(StartGate); ok {
		if err := g.BeforeStart(ctx); err != nil {
			return res, fmt.Errorf("not started: %w", err)
		}
	}
	box.isolate(cmd)
	start := time.Now()
	err := cmd.Start()
	box.started()
	if tty != nil {
		tty.started(err == nil)
	}
	if err != nil {
		return res, fmt.Errorf("hosts: local: %w", err)
	}
	done, terr := track(ctx, l.Tracker, localProcess(cmd.Process.Pid, command), opts.Approval)
	defer done()
	if terr != nil {
		// Started a moment ago, it may not go on: stopped at once.
		stopped, cancel := context.WithCancel(ctx)
		cancel()
		res, _ = waitLocal(stopped, cmd, opts.Timeout)
		if tty != nil {
			tty.drain()
		}
		res.Host, res.Duration = LocalHost, time.Since(start)
		return res, fmt.Errorf("stopped the moment it started (it may have begun): %w", terr)
	}
	res, err = waitLocal(ctx, cmd, opts.Timeout)
	box.report(&res)
	if tty != nil {
		tty.drain()
	}
	res.Host, res.Duration = LocalHost, time.Since(start)
	out.fill(&res)
	if err != nil {
		return res, fmt.Errorf("hosts: local: %w", err)
	}
	return res, nil
}

// command prepares the process: the shell, its directory, environment and
// own process group.
func (l *Local) command(command string, opts Options) *exec.Cmd {
	shell := l.Shell
	if shell == "" {
		shell = RunnerShell // the dialect the policy parses
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = opts.Dir
	if cmd.Dir == "" {
		cmd.Dir = l.Dir
	}
	cmd.Env = l.environ(opts.Env)
	cmd.Stdin = opts.Stdin
	// If a background child keeps the output open after the shell exits,
	// stop waiting for it after a while; the group is killed anyway.
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	return cmd
}

// environ is the allowlisted part of the bot's environment plus extra.
func (l *Local) environ(extra []string) []string {
	allow := l.AllowEnv
	if allow == nil {
		allow = DefaultAllowEnv
	}
	var env []string
	for _, name := range allow {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	env = append(env, quietEnv...)
	return append(env, extra...)
}

// waitLocal waits for cmd, killing its process group at the deadline or
// when ctx ends: SIGTERM, then SIGKILL after killAfter, like timeout -k.
func waitLocal(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (Result, error) {
	res := Result{ExitCode: -1}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }() // ends when the process is reaped
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	pgid := cmd.Process.Pid
	cancelled := false
	select {
	case <-waited: // an exit status, or ErrWaitDelay: judged by ProcessState
	case <-ctx.Done():
		cancelled = true
		killGroup(pgid, waited)
	case <-deadline.C:
		res.TimedOut = true
		killGroup(pgid, waited)
	}
	// Background children left in the group die with the command, as
	// they do remotely when timeout(1) signals its group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	res.ExitCode, res.Signal = exitStatus(cmd)
	switch {
	case cancelled:
		return res, fmt.Errorf("cancelled, command killed: %w", context.Cause(ctx))
	case res.TimedOut:
		res.ExitCode, res.Signal = 124, ""
	}
	return res, nil
}

// killGroup sends SIGTERM to the group, SIGKILL after killAfter, and
// waits for the command's end.
func killGroup(pgid int, waited <-chan error) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(killAfter)
	defer t.Stop()
	select {
	case <-waited:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
	}
}

// exitStatus reads the exit code or signal of a finished command.
func exitStatus(cmd *exec.Cmd) (int, string) {
	if cmd.ProcessState == nil {
		return -1, ""
	}
	st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return cmd.ProcessState.ExitCode(), ""
	case st.Signaled():
		return 128 + int(st.Signal()), signalName(st.Signal())
	}
	return st.ExitStatus(), ""
}

// signalName is the SSH-style name of sig ("TERM", "KILL").
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGABRT: "ABRT", syscall.SIGALRM: "ALRM", syscall.SIGFPE: "FPE", syscall.SIGHUP: "HUP",
		syscall.SIGILL: "ILL", syscall.SIGINT: "INT", syscall.SIGKILL: "KILL", syscall.SIGPIPE: "PIPE",
		syscall.SIGQUIT: "QUIT", syscall.SIGSEGV: "SEGV", syscall.SIGTERM: "TERM", syscall.SIGUSR1: "USR1",
		syscall.SIGUSR2: "USR2",
	}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(sig))
}
