package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestFullDiskIsAnErrorToTheClient runs the real binary on a database in
// a real filesystem that fills up: a small tmpfs (mounting one needs
// root, which the tests have; SQLite's max_page_count would only
// simulate it, and not the WAL's appends failing as a full disk makes
// them fail). While the disk is full every post is answered 503 saying
// so, none 201; /readyz is 503 naming the database; once space returns
// both recover by themselves; and after a restart no message id or seq
// a client saw is handed out again.
func TestFullDiskIsAnErrorToTheClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	mountTmpfs(t, disk, "8m")
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\nstore:\n  path: "+filepath.Join(disk, "opsbot.db")+"\n"), 0o600)
	bot, base := startRun(t, dir, cfg)
	watch := watchSeq(t, base)

	thread := postMessage(t, base, "before the disk fills")
	filler := fill(t, disk)
	for i := range 15 {
		code, res := post(t, base, thread, "while the disk is full "+strconv.Itoa(i))
		if code == http.StatusCreated {
			t.Errorf("post %d while the disk is full: 201 (id %s); want 503", i, res.ID)
			continue
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(res.Error, "the disk is full") {
			t.Errorf("post %d while the disk is full: %d %q; want 503 saying the disk is full", i, code, res.Error)
		}
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"database"`) || !strings.Contains(body, "the disk is full") {
		t.Errorf("/readyz while the disk is full: %d %s; want 503 naming the database and the full disk", code, body)
	}

	os.Remove(filler)
	// /readyz tries a write itself: the first one after space returned
	// is ready, no post needed.
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once space returned: %d %s; want 200", code, body)
	}
	code, res := post(t, base, thread, "after space returned")
	if code != http.StatusCreated {
		t.Fatalf("post once space returned: %d %q; want 201", code, res.Error)
	}
	watch.until(t, res.Seq)

	// Full again, and stopped before space returns: what a client saw
	// of a change that was not kept must not be handed out again.
	filler = fill(t, disk)
	code, res = post(t, base, thread, "lost while full")
	if code != http.StatusServiceUnavailable {
		t.Errorf("a post while the disk is full again: %d %+v; want 503", code, res)
	}
	bot.Process.Signal(syscall.SIGTERM)
	bot.Wait()
	// What the stream showed, and what a poster was handed.
	seen := max(watch.last(), res.Seq, idNum(res.ID))
	os.Remove(filler)
	_, base = startRun(t, dir, cfg)
	code, res = post(t, base, thread, "after the restart")
	if code != http.StatusCreated {
		t.Fatalf("post after the restart: %d %q", code, res.Error)
	}
	if res.Seq <= seen || idNum(res.ID) <= seen {
		t.Errorf("after the restart a post got %s at seq %d; a client had seen up to seq %d: ids and seqs went backwards", res.ID, res.Seq, seen)
	}
	texts := threadTexts(t, base, thread)
	for _, want := range []string{"before the disk fills", "after space returned", "after the restart"} {
		if !strings.Contains(texts, want) {
			t.Errorf("after the restart the thread lacks %q:\n%s", want, texts)
		}
	}
}

// mountTmpfs mounts a tmpfs of size at dir until the test ends.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if testing.Short() {
			t.Skipf("needs root to mount a tmpfs (go test -short skips this; make test runs it as root): %v", err)
		}
		t.Fatalf("this test needs root to mount a small tmpfs it can fill (run the tests as root, as CI does): %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// fill writes a file in dir until the filesystem has no space left, and
// returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			f.Write(block[:1]) // the last partial block, to the last byte
			return path
		}
	}
}

// postAnswer is POST /api/messages' answer, success or error.
type postAnswer struct {
	ID    string
	Seq   uint64
	Error string
}

// post adds a message to thread and returns the status and answer.
func post(t *testing.T, base, thread, text string) (int, postAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"channel": "ops", "thread": thread, "user": "alice", "text": text})
	resp, err := http.Post(base+"/api/messages", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res postAnswer
	json.NewDecoder(resp.Body).Decode(&res)
	return resp.StatusCode, res
}

func idNum(id string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(id, "m"), 10, 64)
	return n
}

// seqWatch follows the whole chat's event stream and remembers the
// highest seq it showed.
type seqWatch struct {
	mu      sync.Mutex
	max     uint64
	changed chan struct{}
	ended   chan struct{}
}

func watchSeq(t *testing.T, base string) *seqWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?since=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	w := &seqWatch{changed: make(chan struct{}), ended: make(chan struct{})}
	t.Cleanup(func() { cancel(); <-w.ended })
	go func() {
		defer close(w.ended)
		defer resp.Body.Close()
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if n, err := strconv.ParseUint(strings.TrimPrefix(lines.Text(), "id: "), 10, 64); err == nil && strings.HasPrefix(lines.Text(), "id: ") {
				w.mu.Lock()
				w.max = max(w.max, n)
				close(w.changed)
				w.changed = make(chan struct{})
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// last waits for the stream to end (its server stopped) and returns the
// highest seq it showed.
func (w *seqWatch) last() uint64 {
	<-w.ended
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max
}

// until waits for the stream to show seq, and returns the highest seq
// it showed by then (a stream shows changes in seq order).
func (w *seqWatch) until(t *testing.T, seq uint64) uint64 {
	t.Helper()
	limit := time.After(2 * time.Minute) // a hang guard, not a speed bound
	for {
		w.mu.Lock()
		max, changed := w.max, w.changed
		w.mu.Unlock()
		if max >= seq {
			return max
		}
		select {
		case <-changed:
		case <-limit:
			t.Fatalf("the event stream never showed seq %d (up to %d)", seq, max)
		}
	}
}
