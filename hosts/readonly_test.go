package hosts_test

import (
	"context"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// readOnlyAccount is the second account the tests log in as: nobody,
// which every Debian system has. Its shell is nologin, so a command run
// as nobody prints nologin's refusal instead of running: that refusal,
// with sshd's own log of who logged in, shows which account ran it.
const readOnlyAccount = "nobody"

const nologinSays = "This account is currently not available"

// startTwoUserServer starts a real sshd that lets the test's key log in
// as any account: nobody cannot read the harness's authorized_keys, so
// sshd gets the key from a command run as root.
func startTwoUserServer(t *testing.T) *sshtest.Server {
	t.Helper()
	sshtest.SkipShort(t)
	sshtest.SkipShortUnlessRoot(t, "an sshd that logs in as "+readOnlyAccount)
	if _, err := user.Lookup(readOnlyAccount); err != nil {
		t.Fatalf("the read-only tests log in as %q, which this system lacks: %v", readOnlyAccount, err)
	}
	dir := t.TempDir()
	srv, err := sshtest.New(dir, sshtest.Options{Extra: []string{
		"AuthorizedKeysCommand /bin/cat " + filepath.Join(dir, "authorized_keys"),
		"AuthorizedKeysCommandUser root",
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

func runAs(t *testing.T, p *hosts.Pool, h hosts.Host, unattended bool) hosts.Result {
	t.Helper()
	opts := hosts.Options{}
	if unattended { // as the bot and the health checks mark what nobody approved
		opts.Sandbox = &hosts.Sandbox{}
	}
	res, err := p.Run(context.Background(), h, "id -un", opts, nil)
	if err != nil {
		t.Fatalf("run (unattended %v): %v", unattended, err)
	}
	return res
}

// TestReadOnlyUserRunsUnattendedCommands: with ssh.readonly_user set, a
// command the policy allowed without a person logs in as that account,
// over a connection of its own, while an approved command runs as the
// normal user; a host's own readonly_user wins over the global one.
func TestReadOnlyUserRunsUnattendedCommands(t *testing.T) {
	t.Parallel()
	srv := startTwoUserServer(t)
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile},
		User: srv.User, ReadOnlyUser: readOnlyAccount}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	h := hosts.Host{Name: "web-1", Address: srv.Addr()}

	if res := runAs(t, p, h, false); string(res.Output) != srv.User+"\n" || res.ExitCode != 0 {
		t.Errorf("approved command: exit %d, output %q, want %q as the normal user", res.ExitCode, res.Output, srv.User+"\n")
	}
	res := runAs(t, p, h, true)
	if !strings.Contains(string(res.Output), nologinSays) || res.ExitCode == 0 {
		t.Errorf("unattended command: exit %d, output %q, want nologin's refusal (it ran as %s)", res.ExitCode, res.Output, readOnlyAccount)
	}
	if log := srv.Log(); !strings.Contains(log, "Accepted publickey for "+readOnlyAccount+" ") {
		t.Errorf("sshd never accepted a login as %s:\n%s", readOnlyAccount, log)
	}
	if n := p.Connected(); n != 2 {
		t.Errorf("%d connections open, want 2: one per user", n)
	}
	if res := runAs(t, p, h, false); string(res.Output) != srv.User+"\n" {
		t.Errorf("approved command after an unattended one: output %q, want %q", res.Output, srv.User+"\n")
	}

	own := hosts.Host{Name: "web-2", Address: srv.Addr(), ReadOnlyUser: srv.User}
	if res := runAs(t, p, own, true); string(res.Output) != srv.User+"\n" {
		t.Errorf("unattended command on a host with its own readonly_user %q: output %q", srv.User, res.Output)
	}
}

// TestNoReadOnlyUserRunsAsTheNormalUser: without readonly_user an
// unattended command runs as before.
func TestNoReadOnlyUserRunsAsTheNormalUser(t *testing.T) {
	t.Parallel()
	p, h, srv := newPool(t, sshtest.Options{}, nil)
	if res := runAs(t, p, h, true); string(res.Output) != srv.User+"\n" {
		t.Errorf("unattended command: output %q, want %q", res.Output, srv.User+"\n")
	}
}

func TestReadOnlyUserConfig(t *testing.T) {
	t.Parallel()
	cfg := hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "/dev/null", ReadOnlyUser: "ops ro"},
		Hosts: []hosts.HostConfig{{Name: "web-1", Address: "10.0.0.5", ReadOnlyUser: "a@b"}, {Name: "web-2", Address: "10.0.0.6", ReadOnlyUser: "opsview"}}}
	err := cfg.Validate()
	for _, key := range []string{"ssh.readonly_user", "hosts[0].readonly_user"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate: %v, want a problem with %s", err, key)
		}
	}
	if err != nil && strings.Contains(err.Error(), "hosts[1]") {
		t.Errorf("a good name was refused: %v", err)
	}
	cfg.SSH.ReadOnlyUser, cfg.Hosts[0].ReadOnlyUser = "", ""
	inv, err := hosts.NewInventory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := inv.Lookup("web-2"); h.ReadOnlyUser != "opsview" {
		t.Errorf("inventory host web-2 has readonly user %q, want opsview", h.ReadOnlyUser)
	}
}
