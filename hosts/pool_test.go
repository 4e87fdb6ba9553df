package hosts_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// silentListener accepts TCP connections, records when, and never says a
// word: every SSH handshake with it runs into the connect timeout.
type silentListener struct {
	net.Listener
	mu       sync.Mutex
	accepted []time.Time
}

func newSilentListener(t *testing.T) *silentListener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentListener{Listener: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted = append(s.accepted, time.Now())
			s.mu.Unlock()
			t.Cleanup(func() { c.Close() })
		}
	}()
	return s
}

// acceptedWithin counts the connections accepted within d of the first.
func (s *silentListener) acceptedWithin(d time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, at := range s.accepted {
		if at.Sub(s.accepted[0]) < d {
			n++
		}
	}
	return n
}

func TestPoolBoundsDialConcurrency(t *testing.T) {
	t.Parallel()
	l := newSilentListener(t)
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const timeout = 500 * time.Millisecond
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: known, DialConcurrency: 2, ConnectTimeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	for i := range 6 { // six hosts (users tell them apart), all cold at once
		h := hosts.Host{Name: fmt.Sprint("h", i), Address: l.Addr().String(), User: fmt.Sprint("u", i)}
		wg.Go(func() {
			if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err == nil {
				t.Error("a silent server accepted a command")
			}
		})
	}
	wg.Wait()
	// Until the first two dials time out, no third may start.
	if n := l.acceptedWithin(timeout / 2); n > 2 {
		t.Errorf("%d dials started in the first %v, want at most ssh.dial_concurrency = 2", n, timeout/2)
	}
	if n := l.acceptedWithin(time.Hour); n != 6 {
		t.Errorf("%d dials in all, want 6", n)
	}
}
