package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// guard bounds every wait for something asynchronous: a guard against a
// hang on a loaded machine, never the thing measured.
const guard = 30 * time.Second

// stallingArchive is the chat's real SQLite archive on a disk that stops
// answering when told: a read (or a save) hangs until released, saying
// that it hangs.
type stallingArchive struct {
	*store.Web
	stallReads, stallSaves atomic.Bool
	stuck                  chan string   // "read" or "save", as one hangs
	release                chan struct{} // closed: the disk answers again
}

func (a *stallingArchive) stall(what string, on *atomic.Bool) {
	if on.Load() {
		a.stuck <- what
		<-a.release
	}
}

func (a *stallingArchive) Save(ctx context.Context, m web.StoredMessage) error {
	a.stall("save", &a.stallSaves)
	return a.Web.Save(ctx, m)
}

func (a *stallingArchive) Messages(ctx context.Context, ids []string) ([]web.StoredMessage, error) {
	a.stall("read", &a.stallReads)
	return a.Web.Messages(ctx, ids)
}

func (a *stallingArchive) Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]web.StoredMessage, error) {
	a.stall("read", &a.stallReads)
	return a.Web.Changed(ctx, after, upTo, channel, thread, limit)
}

func (a *stallingArchive) ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]web.Change, error) {
	a.stall("read", &a.stallReads)
	return a.Web.ChangedIDs(ctx, after, upTo, channel, thread, limit)
}

// waitStuck waits until a read or a save ("read", "save") hangs.
func (a *stallingArchive) waitStuck(what string) {
	for <-a.stuck != what {
		continue // a hang of the other kind
	}
}

// sse is an open event stream: its frames, as "event: data" lines.
type sse struct {
	t      *testing.T
	frames chan string
}

// openSSE opens /api/events?query; it fails the test unless the headers
// come within the guard.
func openSSE(t *testing.T, base, query string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	headers := time.AfterFunc(guard, cancel) // a hang ends as an error
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?"+query, nil)
	resp, err := http.DefaultClient.Do(req)
	headers.Stop()
	if err != nil {
		cancel()
		t.Fatalf("open the event stream: %v", err)
	}
	s := &sse{t: t, frames: make(chan string, 256)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.frames)
		lines := bufio.NewScanner(resp.Body)
		event := ""
		for lines.Scan() {
			l := lines.Text()
			switch {
			case strings.HasPrefix(l, "event: "):
				event = l[len("event: "):]
			case strings.HasPrefix(l, "data: "):
				s.frames <- event + ": " + l[len("data: "):]
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return s
}

// next is the stream's next frame.
func (s *sse) next() string {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return f
	case <-time.After(guard):
		s.t.Fatal("nothing came on the stream")
	}
	return ""
}

// A new event stream gets its headers and its ready event at once, even
// while the store does not answer (issue 12, 6b: "new event streams got
// nothing within 8 s"): the replay it asked for waits for the store, the
// stream does not; and a post is not held up by a replay stuck in a read.
func TestNewStreamIsAnsweredAtOnceWhileTheStoreStalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	archive := &stallingArchive{Web: st.Web(), stuck: make(chan string, 16), release: make(chan struct{})}
	c, err := web.New(ctx, web.Config{}, archive)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := c.Post(ctx, connectors.Dest{Platform: web.Platform, Channel: "ops"}, connectors.Message{Text: fmt.Sprintf("history %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	answer := sync.OnceFunc(func() { close(archive.release) })
	t.Cleanup(answer) // before the server's: a failed test does not hang in Close

	// Reads hang: a replay is stuck in its read, yet its stream is open,
	// and a post goes through and reaches a live stream.
	archive.stallReads.Store(true)
	replaying := openSSE(t, srv.URL, "since=0")
	if f := replaying.next(); !strings.HasPrefix(f, "ready: ") {
		t.Fatalf("first frame %q, want the ready event", f)
	}
	archive.waitStuck("read")
	live := openSSE(t, srv.URL, "")
	if f := live.next(); !strings.HasPrefix(f, "ready: ") {
		t.Fatalf("first frame %q, want the ready event", f)
	}
	resp, err := http.Post(srv.URL+"/api/messages", "application/json", strings.NewReader(`{"channel":"ops","user":"alice","text":"posted while a replay hangs"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("post while a replay hangs: %s, want 201", resp.Status)
	}
	if f := live.next(); !strings.Contains(f, "posted while a replay hangs") {
		t.Errorf("the live stream showed %q, want the post", f)
	}

	// A save hangs too (it holds the order of the saves): another new
	// stream is still answered at once.
	archive.stallSaves.Store(true)
	posted := make(chan error, 1)
	go func() {
		_, err := c.Post(ctx, connectors.Dest{Platform: web.Platform, Channel: "ops"}, connectors.Message{Text: "saved late"})
		posted <- err
	}()
	archive.waitStuck("save")
	another := openSSE(t, srv.URL, "since=0")
	if f := another.next(); !strings.HasPrefix(f, "ready: ") {
		t.Fatalf("first frame %q, want the ready event", f)
	}

	// The disk answers again: everything comes, in order.
	archive.stallReads.Store(false)
	archive.stallSaves.Store(false)
	answer()
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sse{replaying, another} {
		for i := range 5 {
			if f := s.next(); !strings.Contains(f, fmt.Sprintf(`"text":"history %d"`, i)) {
				t.Fatalf("replayed %q, want history %d", f, i)
			}
		}
	}
	if f := replaying.next(); !strings.Contains(f, "posted while a replay hangs") {
		t.Errorf("after the replay: %q, want the post made meanwhile", f)
	}
}
