package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// big is a message of the largest size a post may have, of characters
// JSON writes as six bytes each (\u003c): 192 KB on the wire.
var big = strings.Repeat("<", 32000)

// listed walks a list by its cursors and returns every page's body size
// and the ids, in order.
func listed(t *testing.T, h http.Handler, path, key string) (ids []string, sizes []int) {
	t.Helper()
	cursor := ""
	for range 1000 {
		p := path
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		w := call(t, h, "GET", p, "")
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, w.Code, w.Body)
		}
		sizes = append(sizes, w.Body.Len())
		body := decodeBody[map[string]any](t, w)
		for _, item := range body[key].([]any) {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			return ids, sizes
		}
		cursor = next
	}
	t.Fatalf("%s: the cursors never ended", path)
	return nil, nil
}

// Lists come in pages: a limit, a cursor to the next page, every item
// once, and no response over 1 MB even when every message is as large as
// a post may be.
func TestListsArePagedAndBounded(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	ctx := context.Background()
	h := c.Handler()
	var threads []string
	for i := range 30 {
		ref, err := c.Post(ctx, dest("ops", ""), connectors.Message{Text: fmt.Sprint(i) + big})
		if err != nil {
			t.Fatal(err)
		}
		threads = append(threads, ref.Thread)
	}
	var replies []string
	for range 40 {
		ref, _ := c.Post(ctx, dest("ops", threads[0]), connectors.Message{Text: big})
		replies = append(replies, ref.ID)
	}
	ids, sizes := listed(t, h, "/api/channels/ops/threads?limit=200", "threads")
	if len(ids) != 30 || ids[0] != threads[0] || ids[1] != threads[29] || ids[29] != threads[1] {
		t.Errorf("the thread pages listed %d threads %v, want 30, the most recently active first", len(ids), ids)
	}
	for _, n := range sizes {
		if n > 1<<20 {
			t.Errorf("a thread list page of %d bytes, want at most 1 MB", n)
		}
	}
	ids, sizes = listed(t, h, "/api/threads/"+threads[0]+"/messages?limit=200", "messages")
	if len(ids) != 41 {
		t.Fatalf("the message pages listed %d messages, want 41", len(ids))
	}
	// The first page holds the newest messages, in the order posted.
	first := decodeBody[struct{ Messages []messageView }](t, call(t, h, "GET", "/api/threads/"+threads[0]+"/messages?limit=3", "")).Messages
	if len(first) != 3 || first[0].ID != replies[37] || first[2].ID != replies[39] {
		t.Errorf("the first page of 3: %v, want the last three replies in the order posted", ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("%s listed twice", id)
		}
		seen[id] = true
	}
	for _, n := range sizes {
		if n > 1<<20 {
			t.Errorf("a message list page of %d bytes, want at most 1 MB", n)
		}
	}
	small := decodeBody[map[string]any](t, call(t, h, "GET", "/api/channels/ops/threads?limit=5", ""))
	if n := len(small["threads"].([]any)); n != 5 || small["next_cursor"] == nil {
		t.Errorf("limit=5: %d threads, next_cursor %v", n, small["next_cursor"])
	}
	for _, bad := range []string{"limit=0", "limit=201", "limit=x", "cursor=abc"} {
		if w := call(t, h, "GET", "/api/channels/ops/threads?"+bad, ""); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, w.Code)
		}
	}
}

// The connector keeps a bounded set of messages in memory however many
// are posted: the rest are read back from the Archive when asked for.
func TestMessagesInMemoryAreBounded(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	ctx := context.Background()
	var first connectors.Ref
	for i := range 600 { // 600 × 32 KB: twice the cache
		ref, err := c.Post(ctx, dest("ops", ""), connectors.Message{Text: fmt.Sprint(i) + strings.Repeat("x", 32000)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = ref
		}
	}
	c.hub.mu.Lock()
	size, n := c.hub.cache.size, len(c.hub.cache.byID)
	c.hub.mu.Unlock()
	if size > cacheBytes {
		t.Errorf("%d messages, %d bytes in memory, want at most %d bytes", n, size, cacheBytes)
	}
	m, err := c.hub.message(ctx, first.ID)
	if err != nil || !strings.HasPrefix(m.Text, "0xxx") {
		t.Errorf("the first message, read back: %v %.10q", err, m.Text)
	}
	if err := c.Edit(ctx, first, connectors.Message{Text: "edited after eviction"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.hub.message(ctx, first.ID); m.Text != "edited after eviction" || !m.Finished {
		t.Errorf("an evicted message edited: %q finished=%v", m.Text, m.Finished)
	}
}

// A replay longer than one page of the Archive arrives whole and in seq
// order, then live updates follow.
func TestLongReplayIsPaged(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	base := serve(t, c)
	ctx := context.Background()
	n := 2*replayPage + 17
	for i := range n {
		c.Post(ctx, dest("ops", ""), connectors.Message{Text: fmt.Sprint(i)})
	}
	s := openStream(t, base, "since=0", nil)
	upTo := s.ready()
	last := uint64(0)
	for i := range n {
		m := s.message()
		if m.Text != fmt.Sprint(i) || m.Seq <= last {
			t.Fatalf("replayed update %d: %q seq %d after %d", i, m.Text, m.Seq, last)
		}
		last = m.Seq
	}
	if last != upTo {
		t.Errorf("the replay ended at seq %d, ready said %d", last, upTo)
	}
	ref, _ := c.Post(ctx, dest("ops", ""), connectors.Message{Text: "live"})
	if m := s.message(); m.ID != ref.ID {
		t.Errorf("after the replay: %+v, want the live post", m)
	}
}

// Threads whose last change is older than web.retention are deleted from
// the lists and the Archive; newer ones stay.
func TestRetentionDeletesOldThreads(t *testing.T) {
	t.Parallel()
	archive := NewMemoryArchive()
	c := unstarted(t, Config{Retention: 24 * time.Hour}, archive)
	clock := &fakeClock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	c.hub.now = clock.now
	ctx := context.Background()
	old, _ := c.Post(ctx, dest("ops", ""), connectors.Message{Text: "old"})
	c.Post(ctx, dest("ops", old.Thread), connectors.Message{Text: "old reply"})
	clock.add(20 * time.Hour)
	kept, _ := c.Post(ctx, dest("ops", ""), connectors.Message{Text: "kept"})
	revived, _ := c.Post(ctx, dest("ops", ""), connectors.Message{Text: "revived"})
	clock.add(10 * time.Hour)
	c.Post(ctx, dest("ops", revived.Thread), connectors.Message{Text: "new reply"})
	n, err := c.hub.prune(ctx, clock.now().Add(-c.cfg.Retention))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d threads, %v; want 1", n, err)
	}
	threads, _, _, _ := c.hub.threadList(ctx, "ops", page{limit: 50})
	if len(threads) != 2 || threads[0].ID != revived.Thread || threads[1].ID != kept.Thread {
		t.Errorf("after pruning: %+v", threads)
	}
	if left, _ := archive.ThreadMessages(ctx, old.Thread, 0, 10); len(left) != 0 {
		t.Errorf("the archive still holds %d messages of the old thread", len(left))
	}
	if _, err := c.hub.message(ctx, old.ID); err == nil {
		t.Error("the old thread's message can still be read")
	}
}
