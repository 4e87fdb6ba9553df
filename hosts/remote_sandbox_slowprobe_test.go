package hosts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestRemoteSandboxProbeStoppedAtItsDeadlineFindsNothing: a probe that the
// host's timeout(1) stops (here a bwrap that never answers; on a loaded
// fleet, a slow one: 1,000 loopback hosts probed 64 at a time on two
// cores) is not a host without a sandbox: the policy must not turn its
// allow into "needs approval" for it. The host is asked again next time,
// and an unapproved command there still never runs unconfined.
func TestRemoteSandboxProbeStoppedAtItsDeadlineFindsNothing(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{Without: []string{"bwrap"}})
	hang := "#!/bin/sh\nexec sleep 600\n"
	if err := os.WriteFile(filepath.Join(srv.Dir, "bin", "bwrap"), []byte(hang), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := hosts.Host{Name: "slow-1", Address: srv.Addr()}
	if err := p.MissingSandbox(bg, h); err != nil {
		t.Errorf("MissingSandbox after a probe stopped at its deadline = %v; want nil (not known to be missing)", err)
	}
	if _, _, err := p.RemoteSandbox(bg, h); err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("RemoteSandbox after a probe stopped at its deadline: %v; want it to say the probe got no answer", err)
	}
	opts := unapproved()
	opts.Timeout = 2 * time.Second // the command carries the probe: its own deadline bounds it
	if res, err := p.Run(bg, h, "echo ran", opts, nil); err == nil && strings.Contains(string(res.Output), "ran") {
		t.Errorf("an unapproved command ran on a host whose sandbox never answered")
	}
}
