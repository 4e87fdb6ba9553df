//go:build sqlite_fts5

package store

import (
	"context"
	"path/filepath"
	"testing"
)

// Built with the sqlite_fts5 tag, the memory has its full-text index,
// ranks the rarer word's match first, and an index whose triggers a
// build without FTS5 dropped is rebuilt on the next open.
func TestMemoryFullTextIndex(t *testing.T) {
	t.Parallel()
	if !FullTextSearch() {
		t.Fatal("FullTextSearch() = false in a build with the sqlite_fts5 tag")
	}
	path := filepath.Join(t.TempDir(), "opsbot.db")
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t"})
	for range 5 {
		s.Sessions().AppendMessages(ctx, sess.ID, textMsg("user", "service restarted"))
	}
	s.Sessions().AppendMessages(ctx, sess.ID, textMsg("user", "kafka broker restarted"))
	if !s.Memory().fullText(ctx) {
		t.Fatal("the store did not make its full-text index")
	}
	hits, err := s.Memory().Search(ctx, MemoryQuery{Text: "kafka restarted"})
	if err != nil || len(hits) != 6 || hits[0].Text != "kafka broker restarted" {
		t.Fatalf("hits = %+v, %v; want 6, kafka's first", hits, err)
	}
	// What a build without FTS5 does on open; then it writes.
	s.write.Exec(`DROP TRIGGER memory_fts_ai; DROP TRIGGER memory_fts_ad`)
	s.Sessions().AppendMessages(ctx, sess.ID, textMsg("user", "zookeeper lost quorum"))
	s.Close()
	s, err = Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if hits, err := s.Memory().Search(ctx, MemoryQuery{Text: "zookeeper"}); err != nil || len(hits) != 1 {
		t.Errorf("after reopening: %+v, %v; want the message written without the index", hits, err)
	}
}
