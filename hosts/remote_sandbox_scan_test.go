package hosts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/policy"
)

// scanMarker is in every secret file of bareSecretTree.
const scanMarker = "MARKER-7f3a"

// bareSecretTree writes, under a scratch directory, a tree of bare-name
// secrets (no named path masks them) and a plain file, plus links from
// the tree to a secret and to a directory of secrets outside it; it
// returns the directory.
func bareSecretTree(t testing.TB) string {
	t.Helper()
	dir := scratchDirTB(t)
	files := map[string]string{
		"app/config/server.key": scanMarker, "app/sub/id_rsa": scanMarker, "app/certs/SERVER.KEY": scanMarker,
		"app/sub/deep/id_ed25519": scanMarker, "app/my keys/prod server.key": scanMarker,
		"app/krb/http.keytab": scanMarker, "outside/db.key": scanMarker, "outside2/vault/tls.p12": scanMarker,
		"app/.env": scanMarker, "app/config/.env.production": scanMarker, "app/tls/site.PEM": scanMarker,
		"app/ok.txt": "plain",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"app/innocent": "outside/db.key", "app/linked": "outside2"} {
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scratchDirTB is scratchDir for tests and benchmarks.
func scratchDirTB(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "opsbot-rscan-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestRemoteSandboxBareNameSecrets: commands the classifier might let
// through, run as an unapproved command runs on an SSH host, read a tree
// of bare-name secrets: no marker byte comes out, and the plain file
// still reads.
func TestRemoteSandboxBareNameSecrets(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := bareSecretTree(t)
	opts := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths, Dir: dir}
	m := scanMarker
	attempts := []string{
		"grep -r " + m + " app", "grep -R " + m + " app", "grep -rl " + m + " app | xargs cat",
		"grep -r " + m + " " + dir, "cd app && grep -r " + m, "rg -uu -L " + m + " app || grep -R " + m + " .",
		"find app -type f -exec cat {} +", "find app -name '*' -type f | xargs cat",
		"tar cf - app | tar xOf -", "tar czf - -h app | zcat | strings",
		"cp -r app /tmp/c && cat /tmp/c/config/server.key /tmp/c/sub/id_rsa",
		"ls -R app; cat app/sub/id_rsa app/sub/deep/id_ed25519 app/certs/SERVER.KEY",
		"cat 'app/my keys/prod server.key'", "cat app/my\\ keys/*", "cat app/innocent app/linked/vault/tls.p12",
		"ln -s " + dir + "/app/config/server.key /tmp/l && cat /tmp/l",
		"cd app/krb && cat *", "head -c 100 app/config/server.key",
		"for f in $(find app -iname '*.key'); do cat \"$f\"; done",
		"find app -type f | while read -r f; do cat \"$f\"; done",
		"awk '{print FILENAME\": \"$0}' app/*/* app/*/*/*", "find . -type f -print0 | xargs -0 awk 1",
		"ls -d " + dir + "/app/*/* | xargs cat", "du -a app | cut -f2 | xargs cat 2>/dev/null",
		"cat < app/config/server.key", "grep -r --include='*.KEY' " + m + " app",
	}
	attempts = append(append(attempts, bareSecretAttempts(m, dir)...), cwdSecretAttempts(m)...)
	for _, cmd := range attempts {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, p, h, cmd, opts)
			if strings.Contains(string(res.Output), m) {
				t.Errorf("the marker leaked (exit %d):\n%s", res.ExitCode, res.Output)
			}
		})
	}
	res := mustRun(t, p, h, "cat app/ok.txt; grep -r plain app", opts)
	if out := string(res.Output); !strings.HasPrefix(out, "plain\n") || !strings.Contains(out, "app/ok.txt:plain") {
		t.Errorf("the plain file did not read: exit %d %q", res.ExitCode, res.Output)
	}
}

// TestRemoteSandboxBareNameUnmasked shows what the scan closes: the same
// tree, with no bare names in the list, leaks the marker.
func TestRemoteSandboxBareNameUnmasked(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := bareSecretTree(t)
	res := mustRun(t, p, h, "grep -r "+scanMarker+" app", hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: []string{"/etc/shadow"}, Dir: dir})
	if !strings.Contains(string(res.Output), scanMarker) {
		t.Fatalf("the control read nothing: exit %d %q", res.ExitCode, res.Output)
	}
}

// TestRemoteSandboxScanFastPath: the health checks' commands and other
// metadata readers run unapproved, / included; a content reader over /
// is refused in words, not by a timeout.
func TestRemoteSandboxScanFastPath(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	opts := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths}
	for _, cmd := range []string{"uptime", "df -P /", "df -P / | awk 'NR==2 {print $5+0}'", "ls /", "du -sh /etc/hostname", "free -m", "stat /"} {
		if res := mustRun(t, p, h, cmd, opts); !res.OK() {
			t.Errorf("%s: exit %d %q", cmd, res.ExitCode, res.Output)
		}
	}
	for _, cmd := range []string{"grep -r x /", "cat $(ls /)", "cd / && grep -r x .", "grep -R x /proc"} {
		res := mustRun(t, p, h, cmd, opts)
		if res.ExitCode != 126 || !strings.Contains(string(res.Output), "reads the whole file system") || !strings.Contains(string(res.Output), "needs a person's approval") {
			t.Errorf("%s: exit %d %q; want the refusal", cmd, res.ExitCode, res.Output)
		}
	}
}

// TestRemoteSandboxScanBound: a tree with more secrets than the scan may
// mask refuses the command in words that say it needs approval.
func TestRemoteSandboxScanBound(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := scratchDir(t)
	for i := range 2001 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("k%d.key", i)), []byte(scanMarker), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := mustRun(t, p, h, "grep -r "+scanMarker+" "+dir, hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths})
	if out := string(res.Output); res.ExitCode != 126 || strings.Contains(out, scanMarker) || !strings.Contains(out, "in time; it needs a person's approval") {
		t.Fatalf("exit %d %q; want the refusal", res.ExitCode, out)
	}
}

// TestRemoteSandboxScanWithBusyBoxFind: on a host whose find is
// BusyBox's (no -printf), the scan cannot run; a command that needs it
// is refused in words that say it needs approval, instead of running
// with no masks of bare-name secrets (which it did: find's failure read
// as "nothing found"). A command that needs no scan still runs.
func TestRemoteSandboxScanWithBusyBoxFind(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{Replace: map[string]string{"find": "/usr/bin/busybox"}}, nil)
	dir := bareSecretTree(t)
	opts := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths, Dir: dir}
	res := mustRun(t, p, h, "command -v find", hosts.Options{Dir: dir}) // as an approved command: outside bubblewrap, where the scan runs
	if target, err := os.Readlink(strings.TrimSpace(string(res.Output))); err != nil || target != "/usr/bin/busybox" {
		t.Fatalf("the host's find is not BusyBox's: %q (%v)", res.Output, err)
	}
	for _, cmd := range []string{"grep -r " + scanMarker + " app", "cat app/sub/*", "cd app && grep -r " + scanMarker} {
		res := mustRun(t, p, h, cmd, opts)
		if out := string(res.Output); res.ExitCode != 126 || strings.Contains(out, scanMarker) || !strings.Contains(out, "GNU find") || !strings.Contains(out, "needs a person's approval") {
			t.Errorf("%s: exit %d %q; want the refusal", cmd, res.ExitCode, out)
		}
	}
	if res := mustRun(t, p, h, "uptime", opts); !res.OK() {
		t.Errorf("uptime: exit %d %q", res.ExitCode, res.Output)
	}
}
