package hosts_test

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// TestSandboxBareNameSecrets: on the bot's own host, commands the
// classifier might let through read a tree of bare-name secrets outside
// the homes and the working directory: no marker byte comes out, the
// plain file still reads, and a content reader over / is refused in
// words while df -P / runs.
func TestSandboxBareNameSecrets(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) || hosts.SandboxIsolation() != nil {
		t.Fatalf("this host cannot give the sandbox a mount namespace: %v", hosts.SandboxIsolation())
	}
	dir := bareSecretTree(t)
	m := scanMarker
	sb := &hosts.Sandbox{Hidden: policy.DefaultSecretPaths}
	for _, cmd := range append([]string{
		"grep -r " + m + " " + dir, "grep -R " + m + " " + dir + "/app", "cd " + dir + " && grep -r " + m,
		"find " + dir + " -type f -exec cat {} +", "tar cf - -C " + dir + " app | tar xOf -",
		"cat " + dir + "/app/innocent " + dir + "/app/linked/vault/tls.p12 " + dir + "/app/certs/SERVER.KEY",
		"cat '" + dir + "/app/my keys/prod server.key'", "ls -d " + dir + "/app/*/* | xargs cat",
	}, bareSecretAttempts(m, dir)...) {
		res, err := (&hosts.Local{}).Run(bg, localHost, cmd, hosts.Options{Sandbox: sb}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Output), m) {
			t.Errorf("%s: the marker leaked (exit %d):\n%s", cmd, res.ExitCode, res.Output)
		}
	}
	for _, cmd := range cwdSecretAttempts(m) {
		res, err := (&hosts.Local{}).Run(bg, localHost, cmd, hosts.Options{Sandbox: sb, Dir: dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Output), m) {
			t.Errorf("in %s: %s: the marker leaked (exit %d):\n%s", dir, cmd, res.ExitCode, res.Output)
		}
	}
	for cmd, want := range map[string]string{"cat " + dir + "/app/ok.txt": "plain", "df -P / | awk 'NR==2 {print $5+0}'": "",
		"grep -r x /": "reads the whole file system"} {
		res, err := (&hosts.Local{}).Run(bg, localHost, cmd, hosts.Options{Sandbox: sb}, nil)
		if err != nil || !strings.Contains(string(res.Output), want) || (want == "reads the whole file system") == res.OK() {
			t.Errorf("%s: exit %d %q %v; want %q", cmd, res.ExitCode, res.Output, err, want)
		}
	}
}
