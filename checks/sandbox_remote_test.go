package checks

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// hostWithoutBwrap starts an sshd whose sessions find every program of
// /usr/bin and /usr/sbin but bwrap: a host without bubblewrap, as far as
// its commands can tell (sshd sets PATH after SetEnv, so a forced command
// sets it, as a host's profile would).
func hostWithoutBwrap(t *testing.T) *sshtest.Server {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin"} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "bwrap" {
				if err := os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name())); err != nil && !errors.Is(err, os.ErrExist) {
					t.Fatal(err)
				}
			}
		}
	}
	return sshtest.Start(t, sshtest.Options{Extra: []string{`ForceCommand PATH=` + bin + ` exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"`}})
}

// TestChecksRunInTheRemoteSandbox: a health check runs inside the SSH
// host's sandbox where it has one (its write goes nowhere), and on a host
// with none it still runs, under policy.remote_sandbox: required: a
// scheduled report never waits for a person.
func TestChecksRunInTheRemoteSandbox(t *testing.T) {
	t.Parallel()
	boxed := sshtest.Start(t, sshtest.Options{})
	bare := hostWithoutBwrap(t)
	known := filepath.Join(t.TempDir(), "known_hosts")
	var lines []byte
	for _, f := range []string{boxed.KnownHosts, bare.KnownHosts} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b...)
	}
	if err := os.WriteFile(known, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	fleet, err := hosts.NewFleet(hosts.Config{
		SSH:   hosts.SSHConfig{KnownHosts: known, IdentityFiles: []string{boxed.IdentityFile, bare.IdentityFile}, User: boxed.User},
		Hosts: []hosts.HostConfig{{Name: "boxed", Address: boxed.Addr()}, {Name: "bare", Address: bare.Addr()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	dir, err := os.MkdirTemp("/var/tmp", "opsbot-checks-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pol, err := approvals.NewPolicy(approvals.PolicyConfig{Allow: []string{"touch"}})
	if err != nil {
		t.Fatal(err)
	}
	checks := []Check{
		{Name: "boxed-write", Targets: "boxed", Command: "touch " + dir + "/boxed", Expect: Expect{}},
		{Name: "bare-write", Targets: "bare", Command: "touch " + dir + "/bare", Expect: Expect{}},
	}
	r := &Runner{Hosts: fleet, Resolver: fleet.Inventory, Policy: PolicyOf(pol), Store: openStore(t)}
	rep, err := r.Run(bg, Schedule{Name: "sandboxed", Cron: "@hourly", Checks: []string{"boxed-write", "bare-write"}}, checks)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Counts(); c.OK != 1 || len(rep.Results) != 2 {
		t.Errorf("counts %+v, want the bare host's check ok and the boxed one's failed (read-only):\n%s", c, joined(rep.Details(32000)))
	}
	if _, err := os.Stat(filepath.Join(dir, "boxed")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a check on a host with bubblewrap wrote outside its sandbox: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bare")); err != nil {
		t.Errorf("a check on a host without a sandbox did not run under required: %v", err)
	}
}
