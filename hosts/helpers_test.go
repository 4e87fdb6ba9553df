package hosts_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// newPool starts an sshd and a pool that trusts it; both end with the test.
func newPool(t *testing.T, srvOpts sshtest.Options, tune func(*hosts.SSHConfig)) (*hosts.Pool, hosts.Host, *sshtest.Server) {
	t.Helper()
	srv := sshtest.Start(t, srvOpts)
	cfg := hosts.Config{SSH: hosts.SSHConfig{
		KnownHosts:    srv.KnownHosts,
		IdentityFiles: []string{srv.IdentityFile},
		User:          srv.User,
	}}
	if tune != nil {
		tune(&cfg.SSH)
	}
	p, err := hosts.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, hosts.Host{Name: "test-1", Address: srv.Addr()}, srv
}

// recorder collects streamed chunks.
type recorder struct {
	mu     sync.Mutex
	chunks map[hosts.Stream]*strings.Builder
	first  chan struct{} // closed at the first chunk
	once   sync.Once
}

func newRecorder() *recorder {
	return &recorder{chunks: map[hosts.Stream]*strings.Builder{hosts.Stdout: {}, hosts.Stderr: {}}, first: make(chan struct{})}
}

func (r *recorder) chunk(c hosts.Chunk) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunks[c.Stream].Write(c.Data)
	r.once.Do(func() { close(r.first) })
}

func (r *recorder) get(s hosts.Stream) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.chunks[s].String()
}

// waitGone polls until no process matches marker, failing after 10 s.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := sshtest.Processes(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes matching %q still running 10 s later: %v", marker, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitRunning polls until a process matches marker, failing after 10 s.
func waitRunning(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(sshtest.Processes(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no process matching %q started", marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// uniqueSleep is a long sleep findable by its unusual argument: the
// sleep process itself (not only its shell) must be gone after a kill.
func uniqueSleep() string {
	return fmt.Sprintf("sleep 600.%06d", rand.IntN(1_000_000))
}

var bg = context.Background()

// heapPeak samples the live heap while output streams, to show that memory
// stays bounded whatever a command prints.
type heapPeak struct {
	base, peak uint64
	seen, next int64
}

func newHeapPeak() *heapPeak {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &heapPeak{base: m.HeapInuse}
}

// sample is a chunk callback: every 4 MiB of output, it reads HeapInuse.
func (h *heapPeak) sample(c hosts.Chunk) {
	h.seen += int64(len(c.Data))
	if h.seen < h.next {
		return
	}
	h.next = h.seen + 4<<20
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapInuse)
}

// check fails when the heap grew by more than limit during the run.
func (h *heapPeak) check(t *testing.T, limit uint64) {
	t.Helper()
	if h.peak > h.base && h.peak-h.base > limit {
		t.Errorf("heap in use grew by %d MiB while streaming %d MiB, want at most %d MiB",
			(h.peak-h.base)>>20, h.seen>>20, limit>>20)
	}
	t.Logf("heap in use: base %d MiB, peak %d MiB, %d MiB streamed", h.base>>20, h.peak>>20, h.seen>>20)
}

// checkCapped checks a `yes` output kept as head, marker, tail.
func checkCapped(t *testing.T, res hosts.Result, limit int) {
	t.Helper()
	out := string(res.Output)
	if len(out) > limit+100 {
		t.Errorf("kept %d bytes, want at most %d plus the marker", len(out), limit)
	}
	if !strings.HasPrefix(out, "y\ny\n") || !strings.HasSuffix(out, "y\ny\n") {
		t.Errorf("output does not keep head and tail: %q...%q", out[:min(20, len(out))], out[max(0, len(out)-20):])
	}
	if !strings.Contains(out, "bytes of output omitted") {
		t.Error("no truncation marker in the output")
	}
}
