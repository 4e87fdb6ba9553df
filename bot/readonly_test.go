package bot

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// What nobody approved runs on an SSH host as ssh.readonly_user; what a
// person approved runs as ssh.user. The read-only account is nobody (its
// shell, nologin, refuses to run anything, which shows who ran it); the
// real sshd gets the test's key for any account from a command run as
// root, as nobody cannot read the harness's authorized_keys.
func TestFleetExecutorRunsUnapprovedCommandsAsTheReadOnlyUser(t *testing.T) {
	t.Parallel()
	sshtest.SkipShort(t)
	sshtest.SkipShortUnlessRoot(t, "an sshd that logs in as nobody")
	dir := t.TempDir()
	srv, err := sshtest.New(dir, sshtest.Options{Extra: []string{
		"AuthorizedKeysCommand /bin/cat " + filepath.Join(dir, "authorized_keys"), "AuthorizedKeysCommandUser root"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	fleet, err := hosts.NewFleet(hosts.Config{
		SSH:   hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User, ReadOnlyUser: "nobody"},
		Hosts: []hosts.HostConfig{{Name: "web-1", Address: srv.Addr()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ex := &executor.Fleet{Fleet: fleet}
	approved := ex.Exec(context.Background(), []string{"web-1"}, "id -un", hosts.ExecOptions{Confinement: hosts.Confinement{Approved: true}})[0]
	if approved.Err != nil || approved.Stdout != srv.User+"\n" {
		t.Errorf("approved command: %+v, want it run as %s", approved, srv.User)
	}
	allowed := ex.Exec(context.Background(), []string{"web-1"}, "id -un", hosts.ExecOptions{})[0]
	if allowed.Err != nil || strings.Contains(allowed.Stdout, srv.User) || !strings.Contains(allowed.Stdout+allowed.Stderr, "not available") {
		t.Errorf("unapproved command: %+v, want nologin's refusal (run as nobody)", allowed)
	}
	if !strings.Contains(srv.Log(), "Accepted publickey for nobody ") {
		t.Errorf("sshd never accepted a login as nobody:\n%s", srv.Log())
	}
}
