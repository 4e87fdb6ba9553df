package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts/sshtest"
)

// `hosts exec` is the person's own command line and runs outside any
// sandbox (docs/security-sandbox.md), so its decision does not ask every
// host for a sandbox first: a cold fan-out starts at once (no bwrap
// probe on any host), and a host without bubblewrap is not a reason to
// ask for an approval of a command the policy allows (which, without a
// terminal, refused the whole fan-out).
func TestHostsExecAsksNoHostForASandbox(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "bwrap-starts")
	bwrap := filepath.Join(t.TempDir(), "bwrap")
	script := fmt.Sprintf("#!/bin/sh\necho start >> %s\nexec /usr/bin/bwrap \"$@\"\n", count)
	if err := os.WriteFile(bwrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	boxed := sshtest.Start(t, sshtest.Options{Addrs: []string{"127.0.0.1", "127.0.0.2"}, Replace: map[string]string{"bwrap": bwrap}})
	bare := sshtest.Start(t, sshtest.Options{Without: []string{"bwrap"}})
	yaml := fmt.Sprintf(`ssh:
  known_hosts: %s
  identity_files: [%s, %s]
  user: %s
hosts:
  - {name: web-1, address: %q, groups: [web]}
  - {name: web-2, address: %q, groups: [web]}
  - {name: bare-1, address: %q, groups: [web]}
`, sshtest.KnownHostsOf(t, boxed, bare), boxed.IdentityFile, bare.IdentityFile, boxed.User, boxed.Addrs[0], boxed.Addrs[1], bare.Addr())
	cfg := filepath.Join(t.TempDir(), "opsbot.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runOpsbot(t, "hosts", "exec", "--config", cfg, "group:web", "--", "uptime")
	if code != 0 || strings.Count(stdout, "load average") != 3 || strings.Contains(stderr, "approval") {
		t.Errorf("exit %d; want uptime's output from web-1, web-2 and bare-1:\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if starts, _ := os.ReadFile(count); len(starts) != 0 {
		t.Errorf("bubblewrap started %d times on web-1 and web-2; want none (no probe before the fan-out)", strings.Count(string(starts), "start"))
	}
}
