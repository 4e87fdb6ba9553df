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
	// The whole server: its listener (so a redial hangs too) and every
	// connection's process.
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
	// The bound is generous against a loaded machine and far below the
	// keepalive interval the bug waited for.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	_, err = p.Run(ctx, h, "echo hi", hosts.Options{Timeout: 30 * time.Second}, nil)
	took := time.Since(t0)
	if err == nil {
		t.Fatal("a command on a frozen host succeeded")
	}
	if took > time.Minute {
		t.Errorf("a command on a frozen host failed after %v (%v); want about two connect timeouts (2 s each), well under the keepalive interval", took.Round(time.Second), err)
	}
	t.Logf("failed after %v: %v (%s)", took.Round(time.Millisecond), err, hosts.Reason(err))
}
