package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/store"
)

// hostsConfig writes a config with two SSH hosts on a real sshd, one in
// group web, plus one host whose port nobody listens on.
func hostsConfig(t *testing.T) string {
	t.Helper()
	srv := sshtest.Start(t, sshtest.Options{})
	yaml := fmt.Sprintf(`ssh:
  known_hosts: %s
  identity_files: [%s]
  user: %s
  connect_timeout: 5s
hosts:
  - name: web-1
    address: %s
    groups: [web]
  - name: web-22
    address: %s
    groups: [web]
  - name: dead-1
    address: 127.0.0.1:1
`, srv.KnownHosts, srv.IdentityFile, srv.User, srv.Addr(), srv.Addr())
	path := filepath.Join(t.TempDir(), "opsbot.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHostsPingPrintsTable(t *testing.T) {
	t.Parallel()
	cfg := hostsConfig(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantRows []string // regexps, one per row
	}{
		{"reachable group", []string{"group:web"}, 0, []string{`^web-1\s+127\.0\.0\.1:\d+\s+[\d.]+[µm]?s\s+ok\s+bwrap$`, `^web-22\s+127\.0\.0\.1:\d+\s+[\d.]+[µm]?s\s+ok\s+bwrap$`}},
		{"all hosts, one dead", nil, 1, []string{`^local\s+-\s+\S+\s+ok\s+-$`, `^web-1\s+.*\s+ok\s+bwrap$`, `^web-22\s+.*\s+ok\s+bwrap$`, `^dead-1\s+127\.0\.0\.1:1\s+\S+\s+error: connect: .*refused\s+-$`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runOpsbot(t, append([]string{"hosts", "ping", "--config", cfg}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.wantCode, stderr)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(lines) != len(tt.wantRows)+1 || !regexp.MustCompile(`^HOST\s+ADDRESS\s+LATENCY\s+STATUS\s+SANDBOX$`).MatchString(lines[0]) {
				t.Fatalf("table:\n%s", out)
			}
			for i, re := range tt.wantRows {
				if !regexp.MustCompile(re).MatchString(lines[i+1]) {
					t.Errorf("row %d %q does not match %s", i+1, lines[i+1], re)
				}
			}
		})
	}
}

func TestHostsExec(t *testing.T) {
	t.Parallel()
	cfg := hostsConfig(t)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string
		wantStderr []string
	}{
		{"prefixed output", []string{"group:web", "--", "echo", "hello;", "echo", "oops", ">&2"}, 0,
			[]string{"web-1  | hello\n", "web-22 | hello\n"}, []string{"web-1  | oops\n", "web-22 | oops\n"}},
		{"worst exit code", []string{"web-1,local", "--", "ls", "/nonexistent-opsbot-dir"}, 2,
			nil, []string{"web-1 | exit 2\n", "local | exit 2\n"}},
		{"refused by the policy is 255", []string{"local", "--", "mkfs.ext4", "/dev/sda1"}, 255,
			nil, []string{"denied by policy: mkfs.ext4"}},
		{"needs approval, no terminal is 255", []string{"local", "--", "touch", "/tmp/opsbot-hosts-exec-never"}, 255,
			nil, []string{"no terminal", "not run: it needs an approval", "run it from a terminal"}},
		{"unreachable is 255", []string{"web-1,dead-1", "--", "true"}, 255,
			nil, []string{"dead-1 | error: "}},
		{"partial last line", []string{"web-1", "--", "printf", "no-newline"}, 0,
			[]string{"web-1 | no-newline\n"}, nil},
		{"unknown target", []string{"web-9", "--", "true"}, 2,
			nil, []string{`unknown host "web-9"`, "local, web-1, web-22, dead-1"}},
		{"no command", []string{"web-1"}, 2, nil, []string{"TARGET -- COMMAND"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runOpsbot(t, append([]string{"hosts", "exec", "--config", cfg}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", code, tt.wantCode, out, stderr)
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out, s) {
					t.Errorf("stdout %q lacks %q", out, s)
				}
			}
			// The requester did not deny anything: no "denied by @root".
			if strings.Contains(stderr, "denied by @") {
				t.Errorf("stderr %q says a person denied it", stderr)
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr %q lacks %q", stderr, s)
				}
			}
		})
	}
}

func TestHostsHelp(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"ping", "exec"} {
		code, out, _ := runOpsbot(t, "hosts", sub, "--help")
		if code != 0 || !strings.Contains(out, "TARGET") {
			t.Errorf("hosts %s --help: exit %d, %q", sub, code, out)
		}
	}
	// The codes TestHostsExec sees are the codes the help promises.
	_, out, _ := runOpsbot(t, "hosts", "exec", "--help")
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "255 when the command did not run: a host could not be reached, the policy denied the command, or its approval was refused") {
		t.Errorf("hosts exec --help does not document 255 for a refused command:\n%s", out)
	}
}

// `hosts exec` is audited as the bot's commands are, in the name of the
// person at the terminal, and what it prints passes the redactor.
func TestHostsExecIsAuditedAndRedacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "opsbot.db")
	cfg := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(cfg, []byte("store:\n  path: "+db+"\n"), 0o600)
	code, out, stderr := runOpsbot(t, "hosts", "exec", "--config", cfg, "local", "--",
		"echo token="+redacttest.GitHubToken+"; echo "+redacttest.SlackToken+" >&2")
	if code != 0 || !strings.Contains(out, "local | token=[redacted github-pat]\n") || !strings.Contains(stderr, "local | [redacted slack-bot-token]\n") {
		t.Errorf("exit %d\nstdout: %q\nstderr: %q", code, out, stderr)
	}
	redacttest.AssertNoSecret(t, redacttest.Secrets(), out, stderr)
	st, err := store.Open(context.Background(), store.Config{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	trail, err := st.Audit().AuditTrail(context.Background(), "host:local")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range trail {
		var d struct{ Command, Decision string }
		json.Unmarshal(e.Detail, &d)
		got = append(got, e.Actor+" "+e.Action+" "+d.Decision)
		redacttest.AssertNoSecret(t, redacttest.Secrets(), string(e.Detail))
	}
	who := "console:" + osUser()
	if want := []string{who + " command.start allow", who + " command.end "}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit trail %q, want %q", got, want)
	}
	b, _ := os.ReadFile(db)
	wal, _ := os.ReadFile(db + "-wal")
	redacttest.AssertNoSecret(t, redacttest.Secrets(), string(b), string(wal))
}
