package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "opsbot.yaml")
	os.WriteFile(cfg, []byte(`
ssh:
  known_hosts: /dev/null
hosts:
  - name: web-1
    address: 10.0.0.5:22
    groups: [web]
policy:
  rules:
    - program: systemctl
      groups: [web]
      args: [restart, nginx]
      action: allow
`), 0o600)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("policy:\n  default: maybe\n"), 0o600)
	tests := []struct {
		name  string
		args  []string
		code  int
		first string
		has   string // in stdout
	}{
		{"quote-split rm", []string{"--", "r''m -rf ~"}, exitDeny, "deny", "rm -r on /"},
		{"harmless pipeline", []string{"--", "df -h | sort -k5 -r | head"}, 0, "allow", "sort: read-only"},
		{"words joined", []string{"--", "systemctl", "restart", "nginx"}, exitApprove, "approve", "systemctl restart changes state"},
		{"explain", []string{"--explain", "--", "sudo sh -c 'uptime; ls'"}, 0, "allow", "sudo → sh -c → uptime"},
		{"rule for the host's group", []string{"--config", cfg, "--host", "web-1", "--", "systemctl restart nginx"}, 0, "allow", "config rule"},
		{"rule not for local", []string{"--config", cfg, "--", "systemctl restart nginx"}, exitApprove, "approve", ""},
		{"invisible character", []string{"--", "ls\u200b; rm -rf /tmp/x"}, exitDeny, "deny", "U+200B"},
		{"unknown host", []string{"--host", "nosuch", "--", "ls"}, exitUsage, "", ""},
		{"bad config", []string{"--config", bad, "--", "ls"}, exitUsage, "", ""},
		{"no command", []string{}, exitUsage, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runOpsbot(t, append([]string{"policy", "check"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, stderr)
			}
			first, _, _ := strings.Cut(out, "\n")
			if first != tt.first {
				t.Errorf("first line %q, want %q", first, tt.first)
			}
			if !strings.Contains(out, tt.has) {
				t.Errorf("stdout lacks %q:\n%s", tt.has, out)
			}
			if strings.ContainsRune(out, '\u200b') {
				t.Errorf("stdout carries a raw invisible character:\n%q", out)
			}
		})
	}
}
