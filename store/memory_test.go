package store

import (
	"context"
	"testing"
)

// The limit is SQLite's, for the whole process: a read connection sees
// the limit set through the writer.
func TestLimitMemoryIsTheProcesssLimit(t *testing.T) {
	s, _ := openTest(t) // not parallel: the limit is process-wide
	ctx := context.Background()
	var before int64
	if err := s.read.QueryRowContext(ctx, "PRAGMA soft_heap_limit").Scan(&before); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.LimitMemory(ctx, before) })
	if err := s.LimitMemory(ctx, 6<<20); err != nil {
		t.Fatal(err)
	}
	var got int64
	if err := s.read.QueryRowContext(ctx, "PRAGMA soft_heap_limit").Scan(&got); err != nil || got != 6<<20 {
		t.Errorf("soft_heap_limit seen by a reader = %d, %v; want %d", got, err, 6<<20)
	}
}
