package hosts_test

import (
	"context"
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

// TestFrozenHostFailsWithinTheConnectTimeout: the real sshd, its
// connection open, is frozen with SIGSTOP (a host that hangs: the kernel
// still holds the TCP connection, nothing answers). A command then fails
// within about two connect timeouts (the session request, then one
// redial), not after the keepalive interval (set to ten minutes here, so
// that only the keepalive could end a wait the fix did not bound).
func TestFrozenHostFailsWithinTheConnectTimeout(t *testing.T) {
	t.Parallel()
	p, h, srv := newPool(t, sshtest.Options{}, func(c *hosts.SSHConfig) {
		c.ConnectTimeout, c.KeepAlive = 2*time.Second, 10*time.Minute
	})
	if _, err := p.Run(context.Background(), h, "true", hosts.Options{}, nil); err != nil {
		t.Fatalf("before the freeze: %v", err)
	}
	freeze(t, srv)
	// The bound is generous against a loaded machine and far below the
	// keepalive interval the bug waited for.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	_, err := p.Run(ctx, h, "echo hi", hosts.Options{Timeout: 30 * time.Second}, nil)
	took := time.Since(t0)
	if err == nil {
		t.Fatal("a command on a frozen host succeeded")
	}
	if took > time.Minute {
		t.Errorf("a command on a frozen host failed after %v (%v); want about two connect timeouts (2 s each), well under the keepalive interval", took.Round(time.Second), err)
	}
	t.Logf("failed after %v: %v (%s)", took.Round(time.Millisecond), err, hosts.Reason(err))
}

// freeze stops the whole server with SIGSTOP until the test ends: its
// listener (so a redial hangs too) and every process of its connections,
// commands included — a host that hangs, whose kernel still holds the
// TCP connections while nothing answers.
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

// TestFrozenHostFailsARunningCommandAtItsDeadline: the host freezes while
// a command runs on it. The command fails at its deadline plus one
// keepalive's wait (ssh.connect_timeout), saying the host stopped
// answering — not after the grace a live host gets to end it (killAfter
// + lostGrace, 15 s, then the stop's own waits), nor after the pool's
// keepalive (ten minutes here, so only it could end a wait left unbounded).
func TestFrozenHostFailsARunningCommandAtItsDeadline(t *testing.T) {
	t.Parallel()
	const timeout, connect = 2 * time.Second, 2 * time.Second
	p, h, srv := newPool(t, sshtest.Options{}, func(c *hosts.SSHConfig) {
		c.ConnectTimeout, c.KeepAlive = connect, 10*time.Minute
	})
	sleep := uniqueSleep()
	t0 := time.Now()
	b := startSleep(t, sleep, poolRun(bg, p, h, hosts.Options{Timeout: timeout}))
	freeze(t, srv)
	err := b.wait()
	took := time.Since(t0)
	t.Logf("failed after %v: %v (%s)", took.Round(time.Millisecond), err, hosts.Reason(err))
	if err == nil || !strings.Contains(hosts.Reason(err), "the host stopped answering: no end at the command's 2s deadline and no answer to a keepalive") {
		t.Fatalf("a command on a host frozen under it: %v; want it to say the host stopped answering at its deadline", err)
	}
	// A guard, not the measure: the grace a live host gets is 15 s past
	// the deadline; the fix ends about 2 s past it.
	if took >= timeout+15*time.Second {
		t.Errorf("the command failed %v after it started; want its deadline (2s) plus about a keepalive's wait (2s)", took.Round(time.Millisecond))
	}
}
