//go:build !sqlite_fts5

package store

import (
	"context"
	"testing"
)

// Built without the sqlite_fts5 tag, the store still opens, makes no
// full-text index, and recalls with its LIKE scan, best match first.
func TestMemoryWithoutFTS5FallsBackToScan(t *testing.T) {
	t.Parallel()
	if FullTextSearch() {
		t.Fatal("FullTextSearch() = true in a build without the sqlite_fts5 tag")
	}
	s, _ := openTest(t)
	ctx := context.Background()
	var n int
	s.read.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name LIKE 'memory_fts%'`).Scan(&n)
	if n != 0 {
		t.Errorf("%d full-text objects made without FTS5; want 0", n)
	}
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t"})
	s.Sessions().AppendMessages(ctx, sess.ID, textMsg("user", "redis memory high"), textMsg("user", "redis latency high on cache-1"))
	hits, err := s.Memory().Search(ctx, MemoryQuery{Text: "redis latency"})
	if err != nil || len(hits) != 2 || hits[0].Text != "redis latency high on cache-1" {
		t.Errorf("hits = %+v, %v; want both, the one with both words first", hits, err)
	}
}
