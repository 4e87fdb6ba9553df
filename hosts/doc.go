// Package hosts runs commands on the fleet: an inventory of hosts and
// groups, a pooled SSH client per host, a local runner for the bot's own
// machine, streamed output with deadlines and caps, and fan-out; the
// Executor contract (ExecOptions, ExecResult, Confinement) that everything
// runs commands through, and background Jobs recorded through a small
// JobStore.
//
// # Using it
//
// Build a Fleet from the config's `ssh`, `hosts` and `exec` sections and
// hold it for the process's life:
//
//	fleet, err := hosts.NewFleet(cfg)
//	defer fleet.Close()
//	results, err := fleet.RunTarget(ctx, "group:web", "uptime", hosts.Options{}, hosts.FanOut{
//		OnChunk:  func(c hosts.Chunk) { /* c.Host, c.Stream, c.Data while it runs */ },
//		OnResult: func(r hosts.HostResult) { /* each host as soon as it is done */ },
//	})
//
// One host: fleet.Inventory.Lookup(name) or Resolve(target), then
// fleet.Run(ctx, host, command, opts, onChunk). Everything that runs
// commands takes a Runner (Fleet, Pool and Local are ones), so callers can
// be tested with a RunnerFunc.
//
// # Guarantees
//
//   - Host keys are checked against ssh.known_hosts: unknown and changed
//     keys are refused with distinct errors (ErrUnknownHostKey,
//     ErrHostKeyChanged in a *HostKeyError); nothing is trusted on first
//     use. The agent is never forwarded.
//   - Every command has a deadline (Options.Timeout, default 60 s). On SSH
//     hosts it is enforced by the host (timeout(1), see remoteCommand), so
//     it holds if the bot dies; at the deadline the command's process group
//     gets SIGTERM and, 5 s later, SIGKILL. Cancelling ctx kills the group
//     at once.
//   - Output is streamed whole to the callback; what is kept in
//     Result.Output is capped (head and tail), so memory stays bounded
//     whatever a command prints.
//   - A local command with Options.Sandbox runs through opsbot's own
//     launcher (see Sandbox): Landlock (no write but a private $TMPDIR, no
//     TCP bind, no connect but the ports it was given), a mount namespace
//     (everything read-only, the Hidden secret paths masked), every
//     capability dropped with no_new_privs (CAP_SYSLOG kept for dmesg where
//     kernel.dmesg_restrict needs it; a root bot joins adm and
//     systemd-journal to read logs), a seccomp filter (no renice, prlimit
//     or the like of other processes), and a child subreaper that kills
//     whatever the command left running. Without user namespaces (a bot
//     that is not root) it runs without the mount namespace: secrets are
//     then not masked (SandboxIsolation). The bot gives it to every
//     command that runs without a person's approval.
//   - On an SSH host the same Options.Sandbox runs the command inside
//     bubblewrap, through the SSH session (see remoteCommand, bwrapArgs):
//     read-only root, private /tmp, minimal /dev, the secret paths that
//     exist masked, no capabilities, a pid namespace that ends with the
//     command, and no network unless it was given ports. Nothing is
//     installed on the host; a probe per connection finds whether bwrap
//     works (Pool.RemoteSandbox). Without it the command runs as the
//     readonly_user, if set; with neither, under remote_sandbox: required,
//     it is refused with a NoSandboxError (the policy asks a person
//     instead) unless it is a scheduled check (Options.Scheduled).
//   - Connections are opened on first use, shared (a session per command,
//     at most ssh.max_sessions at once, the rest queue), health-checked,
//     redialled after a failure and closed when idle.
//
// # What SSH hosts need
//
// A POSIX login shell for the remote user (sh, bash, dash, zsh, ksh), bash,
// and timeout(1) from coreutils (or a BusyBox with -k): every command is
// sent as `echo opsbot-pid:…:$$ >&2; … exec env -u BASH_ENV … timeout -k 5s
// Ns bash -c '…'`. The command itself runs under bash (RunnerShell), the
// dialect the policy parses, never under /bin/sh or the login shell; a host
// without bash answers "opsbot: bash is required on this host".
//
// Package sshtest starts a real OpenSSH sshd for tests of any package; the
// program in hosts/bench compares fan-out with parallel-ssh, Ansible and
// OpenSSH ControlMaster (docs/BENCHMARKS.md).
package hosts
