package hosts_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
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
	mu      sync.Mutex
	chunks  map[hosts.Stream]*strings.Builder
	changed chan struct{} // closed, and replaced, at every chunk
}

func newRecorder() *recorder {
	return &recorder{chunks: map[hosts.Stream]*strings.Builder{hosts.Stdout: {}, hosts.Stderr: {}}, changed: make(chan struct{})}
}

func (r *recorder) chunk(c hosts.Chunk) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunks[c.Stream].Write(c.Data)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) get(s hosts.Stream) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.chunks[s].String()
}

// await waits until stream s has carried text; it fails the test when the
// command ends (ended is closed) without printing it.
func (r *recorder) await(t *testing.T, s hosts.Stream, text string, ended <-chan struct{}) {
	t.Helper()
	for {
		r.mu.Lock()
		got, changed := r.chunks[s].String(), r.changed
		r.mu.Unlock()
		if strings.Contains(got, text) {
			return
		}
		select {
		case <-changed:
		case <-ended:
			if got := r.get(s); !strings.Contains(got, text) {
				t.Fatalf("the command ended without printing %q; it printed %q", text, got)
			}
			return
		}
	}
}

// background runs a command in a goroutine: ended is closed when it
// returns, and err is then its error.
type background struct {
	ended chan struct{}
	err   error
}

func inBackground(run func() error) *background {
	b := &background{ended: make(chan struct{})}
	go func() {
		defer close(b.ended)
		b.err = run()
	}()
	return b
}

// wait returns the command's error once it has returned.
func (b *background) wait() error {
	<-b.ended
	return b.err
}

// eventBound bounds the tests' waits for an event: a process's end, a
// connection closing. Each wait is woken by the event itself (a pidfd the
// kernel marks at the process's exit, a channel the pool closes), not by
// polling: the bound only turns an event that never comes into a clear
// failure, and is far above the few seconds any of them takes.
const eventBound = 2 * time.Minute

// waitConnected waits until p has n open connections.
func waitConnected(t *testing.T, p *hosts.Pool, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), eventBound)
	defer cancel()
	if err := hosts.WaitConnected(ctx, p, n); err != nil {
		t.Fatal(err)
	}
}

// find holds (by pidfd) the processes matching marker now, until the test
// ends.
func find(t *testing.T, marker string) []*sshtest.Proc {
	t.Helper()
	procs, err := sshtest.Find(marker)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.Close()
		}
	})
	return procs
}

// awaitExit waits for the end of every process of procs, then of any
// other process matching marker: one the scan that found procs could not
// see (a command line reads empty while its process execs) or one forked
// since, which got the same kill. Each round waits on exits, and the
// rounds end when a scan finds nothing: a kill stops a group from growing.
func awaitExit(t *testing.T, marker string, procs []*sshtest.Proc) {
	t.Helper()
	for round := 0; ; round++ {
		for _, p := range procs {
			if !p.Wait(eventBound) {
				t.Fatalf("process %d matching %q still running %v later", p.Pid, marker, eventBound)
			}
		}
		procs = find(t, marker)
		if len(procs) == 0 {
			return
		}
		if round == 100 {
			t.Fatalf("processes matching %q keep appearing: %v", marker, sshtest.Processes(marker))
		}
	}
}

// findRunning is find for a command known to be running: it fails when
// no process matches.
func findRunning(t *testing.T, marker string) []*sshtest.Proc {
	t.Helper()
	procs := find(t, marker)
	if len(procs) == 0 {
		t.Fatalf("no process matching %q runs", marker)
	}
	return procs
}

// allExited reports whether every process of procs has ended.
func allExited(procs []*sshtest.Proc) bool {
	for _, p := range procs {
		if !p.Exited() {
			return false
		}
	}
	return true
}

// waitGone waits until no process matches marker.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	awaitExit(t, marker, nil)
}

// uniqueSleep is a long sleep findable by its unusual argument: the
// sleep process itself (not only its shell) must be gone after a kill.
func uniqueSleep() string {
	return fmt.Sprintf("sleep 600.%06d", rand.IntN(1_000_000))
}

// announced runs sleep (from uniqueSleep) in a pipeline, so the shell
// does not exec it: both the shell and its child must die. It prints
// "ready" on stderr once the sleep's process exists: from that very
// process, which then becomes the sleep (exec keeps the pid). Every
// process of the run has the sleep's argument in its command line, so
// find(sleep) after "ready" holds them all.
func announced(sleep string) string {
	return "sh -c 'echo ready >&2; exec " + sleep + "' | cat"
}

// poolRun runs commands on h through p, for startSleep.
func poolRun(ctx context.Context, p *hosts.Pool, h hosts.Host, opts hosts.Options) func(string, func(hosts.Chunk)) error {
	return func(cmd string, onChunk func(hosts.Chunk)) error {
		_, err := p.Run(ctx, h, cmd, opts, onChunk)
		return err
	}
}

// startSleep runs announced(sleep) with run and waits until it is ready.
func startSleep(t *testing.T, sleep string, run func(cmd string, onChunk func(hosts.Chunk)) error) *background {
	t.Helper()
	rec := newRecorder()
	b := inBackground(func() error { return run(announced(sleep), rec.chunk) })
	rec.await(t, hosts.Stderr, "ready", b.ended)
	return b
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

// awaitExec waits until process pid has exec'd marker (its command line
// says so): a shell that said "ready" and then execs is still itself for
// a moment, and a search by command line in that moment finds nothing.
// There is no event for an exec's end, so this reads /proc until it shows,
// bounded by eventBound.
func awaitExec(t *testing.T, pid int, marker string) {
	t.Helper()
	deadline := time.Now().Add(eventBound)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never became %q (%v)", pid, marker, err)
		}
		runtime.Gosched()
	}
}
