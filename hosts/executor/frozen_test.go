package executor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestFleetTellsEachHostAsItEnds: of two real sshd hosts, one freezes
// (SIGSTOP) while its command runs. The other's result reaches OnResult
// while the frozen one is still held, and the frozen one ends at its
// command's deadline plus one keepalive's wait, saying the host stopped
// answering — not at the pool's keepalive (ten minutes here).
func TestFleetTellsEachHostAsItEnds(t *testing.T) {
	t.Parallel()
	const deadline, keepalive = 2 * time.Second, 2 * time.Second
	fine, frozen := sshtest.Start(t, sshtest.Options{}), sshtest.Start(t, sshtest.Options{})
	fleet, err := hosts.NewFleet(hosts.Config{
		SSH: hosts.SSHConfig{KnownHosts: sshtest.KnownHostsOf(t, fine, frozen), IdentityFiles: []string{fine.IdentityFile, frozen.IdentityFile}, User: fine.User,
			ConnectTimeout: keepalive, KeepAlive: 10 * time.Minute},
		Hosts: []hosts.HostConfig{{Name: "web-1", Address: fine.Addr()}, {Name: "web-2", Address: frozen.Addr()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	// web-2 (told by the server port in SSH_CONNECTION) says it is ready
	// and sleeps; web-1 answers at once.
	command := fmt.Sprintf(`case "$SSH_CONNECTION" in *" %d") echo ready >&2; exec sleep 600.%06d;; esac; echo fine`, frozen.Port, rand.IntN(1_000_000))
	ready, ended := make(chan struct{}), make(chan hosts.ExecResult, 2)
	returned := make(chan []hosts.ExecResult, 1)
	t0 := time.Now()
	go func() {
		returned <- (&Fleet{Fleet: fleet}).Exec(context.Background(), []string{"web-1", "web-2"}, command, hosts.ExecOptions{Timeout: deadline,
			Confinement: hosts.Confinement{Approved: true},
			OnOutput: func(host string, _ bool, data []byte) {
				if host == "web-2" && strings.Contains(string(data), "ready") {
					close(ready)
				}
			},
			OnResult: func(r hosts.ExecResult) { ended <- r }})
	}()
	select {
	case <-ready:
	case all := <-returned:
		t.Fatalf("web-2 never said it was ready: %+v", all)
	}
	freeze(t, frozen)
	var first hosts.ExecResult
	select {
	case first = <-ended:
	case all := <-returned:
		t.Fatalf("Exec returned without telling a host's result as it ended: %+v", all)
	}
	if first.Host != "web-1" || first.Err != nil || !strings.Contains(first.Stdout, "fine") {
		t.Fatalf("first result told: %+v; want web-1's, with its output", first)
	}
	select {
	case <-returned:
		t.Fatal("Exec returned before the frozen host ended: the first result was not told early")
	default:
	}
	second, all := <-ended, <-returned
	took := time.Since(t0)
	if second.Host != "web-2" || !strings.Contains(hosts.Reason(second.Err), "the host stopped answering") || len(all) != 2 {
		t.Fatalf("second result: %+v (%s), all: %+v; want web-2's, saying the host stopped answering", second, hosts.Reason(second.Err), all)
	}
	// A guard, not the measure: about deadline + keepalive (4 s); the
	// grace a live host gets is 15 s past the deadline.
	if took >= deadline+15*time.Second {
		t.Errorf("the frozen host held the fan-out %v; want its deadline (2s) plus about a keepalive's wait (2s)", took.Round(time.Millisecond))
	}
	t.Logf("web-1 told first; web-2 ended after %v: %s", took.Round(time.Millisecond), hosts.Reason(second.Err))
}

// freeze stops srv with SIGSTOP until the test ends: its listener and
// every process of its connections — a host that hangs while its kernel
// still holds the TCP connections.
func freeze(t *testing.T, srv *sshtest.Server) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(srv.Dir, "sshd.pid"))
	listener, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || listener == 0 {
		t.Fatalf("the listener's pid: %q, %v", raw, err)
	}
	pids := append(srv.Processes(), listener)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
}
