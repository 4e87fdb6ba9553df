package hosts_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

func TestFleetRunsTargetsOnLocalAndSSH(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	f, err := hosts.NewFleet(hosts.Config{
		SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User},
		Hosts: []hosts.HostConfig{
			{Name: "box-1", Address: srv.Addr(), Groups: []string{"boxes"}},
			{Name: "box-2", Address: srv.Addr(), Groups: []string{"boxes"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	var mu sync.Mutex
	var lines []string
	results, err := f.RunTarget(bg, "local,group:boxes", "echo ok", hosts.Options{}, hosts.FanOut{
		OnChunk: func(c hosts.Chunk) { mu.Lock(); lines = append(lines, c.Host+": "+string(c.Data)); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d results, want 3", len(results))
	}
	for _, r := range results {
		if r.Err != nil || !r.Result.OK() || string(r.Result.Output) != "ok\n" {
			t.Errorf("%s: %+v %v", r.Host.Name, r.Result, r.Err)
		}
	}
	if got := strings.Join(lines, ""); !strings.Contains(got, "local: ok\n") || !strings.Contains(got, "box-2: ok\n") {
		t.Errorf("chunks %q do not name their hosts", got)
	}
	if _, err := f.RunTarget(bg, "box-9", "true", hosts.Options{}, hosts.FanOut{}); err == nil || !strings.Contains(err.Error(), "box-1, box-2") {
		t.Errorf("unknown target error %v does not list the hosts", err)
	}
}
