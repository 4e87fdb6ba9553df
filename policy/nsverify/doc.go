// Package nsverify checks the policy against reality. It runs a command the
// way hosts.Local runs it (bash -c, as root), but inside throwaway mount,
// network, PID, IPC and UTS namespaces, over a copy-on-write view of this
// machine's root file system with seed files on top (logs, configs, a git
// repository, a victim directory), and reports every path the command
// changed, every connect or send it attempted outside loopback, every
// privileged call (mount, clock, modules, hostname), and any change to its
// network namespace.
//
// The tests in this package run every command the corpus classifies allow
// and fail on any report that is not Harmless; a fuzz target does the same
// for command lines built from the corpus. The package needs root, strace,
// iproute2, util-linux (unshare, setpriv) and overlayfs: Available says
// which is missing.
package nsverify
