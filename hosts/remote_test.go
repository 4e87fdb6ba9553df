package hosts_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

func TestPoolExitCodesAndOutput(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	tests := []struct {
		name, cmd  string
		opts       hosts.Options
		wantCode   int
		wantSignal string
		wantOut    string
	}{
		{"true", "true", hosts.Options{}, 0, "", ""},
		{"exit 3", "echo hi; exit 3", hosts.Options{}, 3, "", "hi\n"},
		{"false", "false", hosts.Options{}, 1, "", ""},
		{"exit 124 of its own is no timeout", "exit 124", hosts.Options{}, 124, "", ""},
		{"signal", "kill -KILL $$", hosts.Options{}, 137, "KILL", ""},
		{"quotes survive", `printf '%s|' "it's" 'a "b"' '$HOME' '\n'`, hosts.Options{}, 0, "", `it's|a "b"|$HOME|\n|`},
		{"pipes and ;", "echo a | tr a b; echo c", hosts.Options{}, 0, "", "b\nc\n"},
		{"env", `echo "$GREETING"`, hosts.Options{Env: []string{"GREETING=it's me"}}, 0, "", "it's me\n"},
		{"dir", "pwd", hosts.Options{Dir: "/tmp"}, 0, "", "/tmp\n"},
		{"missing dir", "pwd", hosts.Options{Dir: "/no/such/dir"}, 1, "", ""},
		{"stdin", "tr a-z A-Z", hosts.Options{Stdin: strings.NewReader("shout\n")}, 0, "", "SHOUT\n"},
		{"no stdin reads EOF", "cat; echo done", hosts.Options{}, 0, "", "done\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := p.Run(bg, h, tt.cmd, tt.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Signal != tt.wantSignal {
				t.Errorf("exit %d signal %q, want %d %q (output %q)", res.ExitCode, res.Signal, tt.wantCode, tt.wantSignal, res.Output)
			}
			if tt.wantOut != "" && string(res.Output) != tt.wantOut {
				t.Errorf("output %q, want %q", res.Output, tt.wantOut)
			}
			if res.Host != h.Name || res.TimedOut || res.Duration <= 0 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestPoolStreamsStderrApart(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	rec := newRecorder()
	res, err := p.Run(bg, h, "echo out; echo err >&2; echo out2", hosts.Options{}, rec.chunk)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.get(hosts.Stdout); got != "out\nout2\n" {
		t.Errorf("stdout chunks %q", got)
	}
	if got := rec.get(hosts.Stderr); got != "err\n" {
		t.Errorf("stderr chunks %q (the wrapper's pid line must not show)", got)
	}
	if !strings.Contains(string(res.Output), "err\n") || strings.Contains(string(res.Output), "opsbot-pid") {
		t.Errorf("output %q", res.Output)
	}
}

func TestPoolPTY(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	res, err := p.Run(bg, h, "test -t 1 && echo tty; echo err >&2", hosts.Options{PTY: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.ReplaceAll(string(res.Output), "\r", ""); got != "tty\nerr\n" {
		t.Errorf("output %q, want tty and err merged", got)
	}
}

func TestHostKeyRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		knownHost func(srv *sshtest.Server) string
		want      error
		wantText  []string
	}{
		{"unknown", func(srv *sshtest.Server) string {
			return sshtest.KnownHostsLine("[127.0.0.9]:22", srv.HostKey) // another host only
		}, hosts.ErrUnknownHostKey, []string{"unknown host key", "ssh-keyscan"}},
		{"changed", func(srv *sshtest.Server) string {
			return sshtest.KnownHostsLine(srv.Addr(), sshtest.NewHostKey())
		}, hosts.ErrHostKeyChanged, []string{"HOST KEY CHANGED", "may be an attack", "ssh-keygen -R", "legitimate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, h, srv := newPool(t, sshtest.Options{}, nil)
			if err := os.WriteFile(srv.KnownHosts, []byte(tt.knownHost(srv)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := p.Run(bg, h, "true", hosts.Options{}, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			for _, other := range []error{hosts.ErrUnknownHostKey, hosts.ErrHostKeyChanged} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("error %v is also %v", err, other)
				}
			}
			var hk *hosts.HostKeyError
			if !errors.As(err, &hk) || hk.Host != h.Name {
				t.Errorf("error %v is not a *HostKeyError for %s", err, h.Name)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(srv.Log(), "Accepted publickey") {
				t.Error("authenticated to a server whose key was refused")
			}
		})
	}
}

func TestPoolAuthFailureSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	p, h, srv := newPool(t, sshtest.Options{}, nil)
	if err := os.WriteFile(filepath.Join(srv.Dir, "authorized_keys"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := p.Run(bg, h, "true", hosts.Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "identity_files") {
		t.Fatalf("error %v, want an authentication error naming ssh.identity_files", err)
	}
}

// Run as root, this proves the kill session: OpenSSH ignores signal
// requests in root sessions ("session signalling requires privilege
// separation").
func TestPoolCancelKillsRemoteProcess(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	sleep := uniqueSleep()
	ctx, cancel := context.WithCancel(bg)
	run := startSleep(t, sleep, poolRun(ctx, p, h, hosts.Options{}))
	procs := findRunning(t, sleep)
	cancel()
	if err := run.wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run error %v, want context.Canceled", err)
	}
	awaitExit(t, sleep, procs)
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
		t.Errorf("the connection is unusable after a cancel: %v", err)
	}
}

func TestPoolDeadlineKillsCommand(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	marker := fmt.Sprintf("yes opsbot-deadline-%d", time.Now().UnixNano())
	res, err := p.Run(bg, h, marker+" > /dev/null", hosts.Options{Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 124 || res.OK() {
		t.Errorf("result %+v, want timed out with 124", res)
	}
	waitGone(t, marker)
}

// The host starts a command, and the timeout(1) that bounds it, before its
// reply to the exec request reaches the bot. However late that reply, a
// command stopped at its deadline is reported as timed out, not as a plain
// exit 124.
func TestPoolDeadlineReportedWhenTheStartReplyIsLate(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	hosts.SetAfterStart(p, func(pid int) {
		// The reply "arrives" only once the command has met its
		// deadline and timeout(1) has exited.
		proc, err := sshtest.Hold(pid)
		if err != nil {
			t.Error(err)
			return
		}
		defer proc.Close()
		if !proc.Wait(eventBound) {
			t.Errorf("timeout(1), pid %d, still running %v later", pid, eventBound)
		}
	})
	res, err := p.Run(bg, h, uniqueSleep(), hosts.Options{Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 124 || res.Duration < time.Second {
		t.Errorf("result %+v, want timed out with 124 after at least 1s", res)
	}
}

func TestPoolDeadlineHoldsWhenBotDisappears(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	sleep := uniqueSleep()
	run := startSleep(t, sleep, poolRun(bg, p, h, hosts.Options{Timeout: 3 * time.Second}))
	procs := findRunning(t, sleep)
	p.Close() // the bot is gone: nobody will cancel or signal the command
	if err := run.wait(); err == nil {
		t.Error("Run succeeded though its connection was closed")
	}
	if allExited(procs) {
		t.Fatal("the command ended with the connection: this test cannot show the deadline")
	}
	awaitExit(t, sleep, procs) // its own deadline (3 s) must end it
}

// Not parallel: the heap measurement must not see other tests.
func TestPoolOutputCapBoundsMemory(t *testing.T) {
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	const total = 50 << 20
	peak := newHeapPeak()
	res, err := p.Run(bg, h, "yes | head -c 50M", hosts.Options{}, peak.sample)
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputBytes != total || !res.Truncated {
		t.Errorf("printed %d bytes, truncated %v; want %d, true", res.OutputBytes, res.Truncated, total)
	}
	checkCapped(t, res, hosts.DefaultOutputLimit)
	peak.check(t, 32<<20) // 50 MiB went through; far less may be live at once
}

func TestPoolReconnectsAfterServerRestart(t *testing.T) {
	t.Parallel()
	p, h, srv := newPool(t, sshtest.Options{}, nil)
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(bg, h, "echo again", hosts.Options{}, nil)
	if err != nil || string(res.Output) != "again\n" {
		t.Fatalf("after restart: %q, %v", res.Output, err)
	}
	if n := strings.Count(srv.Log(), "Accepted publickey"); n != 2 {
		t.Errorf("%d logins, want 2 (one before and one after the restart)", n)
	}
}

func TestPoolQueuesBeyondMaxSessions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		maxSessions int // the pool's; the server allows 10
	}{
		{"pool limit matches the server", 10},
		{"pool limit above the server's: refused sessions retried", 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, h, srv := newPool(t, sshtest.Options{MaxSessions: 10}, func(c *hosts.SSHConfig) { c.MaxSessions = tt.maxSessions })
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for i := range 20 {
				wg.Go(func() {
					res, err := p.Run(bg, h, fmt.Sprintf("sleep 0.3; echo %d", i), hosts.Options{}, nil)
					if err == nil && string(res.Output) != fmt.Sprintf("%d\n", i) {
						err = fmt.Errorf("output %q, exit %d", res.Output, res.ExitCode)
					}
					errs[i] = err
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("command %d: %v", i, err)
				}
			}
			if n := strings.Count(srv.Log(), "Accepted publickey"); n != 1 {
				t.Errorf("%d connections, want the one pooled connection; sshd log:\n%s", n, srv.Log())
			}
		})
	}
}

func TestPoolClosesIdleConnections(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, func(c *hosts.SSHConfig) {
		c.IdleTimeout, c.KeepAlive = 200*time.Millisecond, 50*time.Millisecond
	})
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, p, 0)
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
		t.Fatalf("after idle close: %v", err)
	}
}

func TestPoolDialsOncePerHost(t *testing.T) {
	t.Parallel()
	p, h, srv := newPool(t, sshtest.Options{}, nil)
	var wg sync.WaitGroup
	for range 8 { // all cold at once: they must share one dial
		wg.Go(func() {
			if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(srv.Log(), "Accepted publickey"); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

func TestPoolHealthCheckDropsHungConnection(t *testing.T) {
	t.Parallel()
	// ssh.connect_timeout also bounds the wait for a keepalive's answer:
	// the frozen connection is dropped one keepalive plus 5 s after the
	// freeze, and the fresh dial after it has 5 s too, plenty on a
	// loaded machine (500 ms was not, under -race).
	p, h, srv := newPool(t, sshtest.Options{}, func(c *hosts.SSHConfig) {
		c.KeepAlive, c.ConnectTimeout = 100*time.Millisecond, 5*time.Second
	})
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	hung := srv.Processes() // the connection's sshd: frozen, it answers nothing, not even with a FIN
	for _, pid := range hung {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	t.Cleanup(func() {
		for _, pid := range hung {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	waitConnected(t, p, 0)
	if res, err := p.Run(bg, h, "echo fresh", hosts.Options{}, nil); err != nil || string(res.Output) != "fresh\n" {
		t.Fatalf("after the health check: %q, %v", res.Output, err)
	}
}

func TestPoolNoticesServerGone(t *testing.T) {
	t.Parallel()
	p, h, srv := newPool(t, sshtest.Options{}, nil)
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	waitConnected(t, p, 0)
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("with the server down: %v, want a connect error", err)
	}
}

// Cancel must work when every session of the connection is busy: the kill
// runs in the cancelled command's own session slot.
func TestPoolCancelWithAllSessionsBusy(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{MaxSessions: 10}, nil)
	ctx, cancel := context.WithCancel(bg)
	others, stopOthers := context.WithCancel(bg)
	sleeps := make([]string, 10)
	runs := make([]*background, len(sleeps))
	procs := make([][]*sshtest.Proc, len(sleeps))
	for i := range sleeps {
		sleeps[i] = uniqueSleep()
		runCtx := others
		if i == 0 {
			runCtx = ctx
		}
		runs[i] = startSleep(t, sleeps[i], poolRun(runCtx, p, h, hosts.Options{}))
		procs[i] = findRunning(t, sleeps[i])
	}
	cancel()
	awaitExit(t, sleeps[0], procs[0])
	for i, s := range sleeps[1:] {
		if allExited(procs[i+1]) {
			t.Errorf("%s was killed with the cancelled command", s)
		}
	}
	stopOthers()
	for i, s := range sleeps[1:] {
		_ = runs[i+1].wait()
		awaitExit(t, s, procs[i+1])
	}
	_ = runs[0].wait()
}
