package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestChatClassifierMissIsHarmlessOnSSHHosts is the acceptance's line: a
// writer declared read-only (policy.allow: [touch], a classifier miss
// simulated) runs on an SSH host without a card, inside the host's
// sandbox, and writes nothing; on a host without bubblewrap or a
// readonly_user (policy.remote_sandbox: required) it needs approval
// instead, and the reason says how to fix the host.
func TestChatClassifierMissIsHarmlessOnSSHHosts(t *testing.T) {
	t.Parallel()
	h1 := sshtest.Start(t, sshtest.Options{})
	bare := sshtest.Start(t, sshtest.Options{Without: []string{"bwrap"}})
	dir, err := os.MkdirTemp("/var/tmp", "opsbot-e2e-") // on the root file system, not the sandbox's private /tmp
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	known := sshtest.KnownHostsOf(t, h1, bare)
	cfg := filepath.Join(t.TempDir(), "opsbot.yaml")
	yaml := fmt.Sprintf(`ssh:
  known_hosts: %s
  identity_files: [%s, %s]
  user: %s
hosts:
  - name: h1
    address: %s
  - name: bare-1
    address: %s
policy:
  allow: [touch]
`, known, h1.IdentityFile, bare.IdentityFile, h1.User, h1.Addr(), bare.Addr())
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := chatCmd(t)
	cmd.Args = append(cmd.Args, "--config", cfg)
	cmd.Stdin = strings.NewReader("run h1 touch " + dir + "/x\nrun bare-1 touch " + dir + "/y\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	out := stdout.String() + stderr.String()
	for _, name := range []string{"x", "y"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s was written (stat: %v):\n%s", dir, name, err, out)
		}
	}
	if !strings.Contains(out, "Read-only file system") {
		t.Errorf("touch on h1 did not run in the sandbox (no read-only error):\n%s", out)
	}
	for _, want := range []string{"no sandbox on bare-1", "install bubblewrap", "readonly_user"} {
		if !strings.Contains(out, want) {
			t.Errorf("the reply on bare-1 lacks %q:\n%s", want, out)
		}
	}
	// One card, bare-1's: the run on h1 needed none.
	if n := strings.Count(out, "Approval needed"); n != 1 || !strings.Contains(out, "on h1: exit 1") {
		t.Errorf("%d approval cards, want bare-1's alone, and h1's run ended by itself:\n%s", n, out)
	}
}
