package hosts_test

import (
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
// secrets (no named path masks them) and a plain file, plus a link from
// the tree to a secret outside it; it returns the directory.
func bareSecretTree(t *testing.T) string {
	t.Helper()
	dir := scratchDir(t)
	files := map[string]string{
		"app/config/server.key": scanMarker, "app/.env": scanMarker, "app/.env.production": scanMarker,
		"app/sub/id_rsa": scanMarker, "app/certs/SERVER.KEY": scanMarker, "app/sub/deep/id_ed25519": scanMarker,
		"app/my keys/prod server.key": scanMarker, "app/krb/http.keytab": scanMarker, "outside/db.key": scanMarker,
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
	if err := os.Symlink(filepath.Join(dir, "outside/db.key"), filepath.Join(dir, "app/innocent")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scanHidden is the guard's list with the dotenv names.
func scanHidden() []string {
	return append(append([]string(nil), policy.DefaultSecretPaths...), ".env", ".env.*")
}

// TestRemoteSandboxBareNameSecrets: commands the classifier may let
// through, run as an unapproved command runs on an SSH host, read a tree
// of bare-name secrets: no marker byte comes out, and the plain file
// still reads.
func TestRemoteSandboxBareNameSecrets(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := bareSecretTree(t)
	opts := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: scanHidden(), Dir: dir}
	attempts := []string{
		"grep -r " + scanMarker + " app",
		"grep -R " + scanMarker + " app",
		"grep -rl " + scanMarker + " app | xargs cat",
		"cat app/config/server.key",
		"cat app/certs/SERVER.KEY app/.env app/.env.production",
		"rg -uu " + scanMarker + " app || grep -r " + scanMarker + " .",
		"find app -type f -exec cat {} +",
		"tar cf - app | cat",
		"cp -r app /tmp/c && cat /tmp/c/config/server.key /tmp/c/sub/id_rsa",
		"du -a app; ls -R app; cat app/sub/id_rsa app/sub/deep/id_ed25519",
		"cat 'app/my keys/prod server.key'",
		"cat app/innocent",
		"ln -s " + dir + "/app/config/server.key /tmp/l && cat /tmp/l",
		"cd app/krb && cat *",
		"grep -r " + scanMarker + " " + dir,
		"cat --  app/config/server.key; head -c 100 app/.env",
		"for f in $(find app -name '*.key'); do cat \"$f\"; done",
	}
	for _, cmd := range attempts {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, p, h, cmd, opts)
			if strings.Contains(string(res.Output), scanMarker) {
				t.Errorf("the marker leaked (exit %d):\n%s", res.ExitCode, res.Output)
			}
		})
	}
	res := mustRun(t, p, h, "cat app/ok.txt", opts)
	if strings.TrimSpace(string(res.Output)) != "plain" {
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
