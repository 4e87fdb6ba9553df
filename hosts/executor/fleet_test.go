package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// A session's working directory is the bot's own: on an SSH host the
// command runs in its login directory instead of failing to cd.
func TestFleetAppliesTheDirectoryLocallyOnly(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	fleet, err := hosts.NewFleet(hosts.Config{
		SSH:   hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User},
		Hosts: []hosts.HostConfig{{Name: "web-1", Address: srv.Addr()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	local := t.TempDir() + "/only-on-the-bot"
	ex := &Fleet{Fleet: fleet}
	res := ex.Exec(context.Background(), []string{"local", "web-1"}, "pwd", hosts.ExecOptions{Dir: t.TempDir()})
	if len(res) != 2 || res[0].Err != nil || res[1].Err != nil || res[0].ExitCode != 0 || res[1].ExitCode != 0 {
		t.Fatalf("results = %+v", res)
	}
	res = ex.Exec(context.Background(), []string{"web-1"}, "pwd", hosts.ExecOptions{Dir: local})
	if res[0].ExitCode != 0 || strings.Contains(res[0].Stdout+res[0].Stderr, "only-on-the-bot") {
		t.Errorf("the remote host was sent the bot's directory: %+v", res[0])
	}
}
