package checks

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/policy"
)

// TestChecksRunInTheRemoteSandbox: a health check runs inside the SSH
// host's sandbox where it has one (its write goes nowhere), and on a host
// with none it still runs, under policy.remote_sandbox: required: a
// scheduled report never waits for a person.
func TestChecksRunInTheRemoteSandbox(t *testing.T) {
	t.Parallel()
	boxed := sshtest.Start(t, sshtest.Options{})
	bare := sshtest.Start(t, sshtest.Options{Without: []string{"bwrap"}})
	known := sshtest.KnownHostsOf(t, boxed, bare)
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
	pol, err := policy.NewPolicy(policy.PolicyConfig{Allow: []string{"touch"}})
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
