package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
	"github.com/opsbot/opsbot/store/storetest"
)

// A new stream while the real database is locked: another program holds the
// SQLite file's read locks (a WAL recovery on a slow disk). A new stream
// is answered at once; its replay fails when the store gives up on the
// read, which ends the stream (the browser reconnects), rather than
// leaving it silent; once the locks go, a new stream replays everything.
func TestNewStreamIsAnsweredAtOnceWhileSQLiteIsLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	st, err := store.Open(ctx, store.Config{Path: path, ReadTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := web.New(ctx, web.Config{}, st.Web())
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

	release, err := storetest.HoldReadLocks(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	locked := openSSE(t, srv.URL, "since=0")
	if f := locked.next(); !strings.HasPrefix(f, "ready: ") {
		t.Fatalf("first frame %q, want the ready event", f)
	}
	locked.end()

	release()
	again := openSSE(t, srv.URL, "since=0")
	if f := again.next(); !strings.HasPrefix(f, "ready: ") {
		t.Fatalf("first frame %q, want the ready event", f)
	}
	for i := range 5 {
		if f := again.next(); !strings.Contains(f, fmt.Sprintf(`"text":"history %d"`, i)) {
			t.Fatalf("replayed %q, want history %d", f, i)
		}
	}
}

// end waits until the server ends the stream; nothing more may come.
func (s *sse) end() {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if ok {
			s.t.Fatalf("got %q, want the stream to end", f)
		}
	case <-time.After(guard):
		s.t.Fatal("the stream stayed open")
	}
}
