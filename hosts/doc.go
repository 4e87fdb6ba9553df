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
//   - A local command with Options.Sandbox runs under Landlock (see
//     Sandbox): read-only file system but a private $TMPDIR, no TCP but the
//     ports it was given. The bot gives it to every command that runs
//     without a person's approval.
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
