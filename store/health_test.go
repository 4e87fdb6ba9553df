package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// queryOnly makes the write connection refuse every write with
// SQLITE_READONLY, as a database on a filesystem remounted read-only
// does. A real read-only remount cannot be made under an open database:
// Linux refuses to remount a filesystem read-only while a file on it is
// open for writing (EBUSY), and the database's files are.
func queryOnly(t *testing.T, s *Store, on bool) {
	t.Helper()
	v := "0"
	if on {
		v = "1"
	}
	if _, err := s.write.Exec("PRAGMA query_only = " + v); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedWriteIsUnavailableAndHealthRecovers: a write the database
// refuses fails with an Unavailable that says why in words; Health then
// reports the database down until a write works again, which it finds
// out by itself.
func TestRefusedWriteIsUnavailableAndHealthRecovers(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	if err := s.Health(ctx); err != nil {
		t.Fatalf("Health of a fresh store: %v", err)
	}
	queryOnly(t, s, true)
	err := s.Web().ReserveSeq(ctx, 10)
	var u *Unavailable
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "is read-only") {
		t.Fatalf("a refused write: %v; want an Unavailable saying the database is read-only", err)
	}
	if err := s.Health(ctx); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Health after a refused write: %v; want it down, saying read-only", err)
	}
	queryOnly(t, s, false)
	if err := s.Health(ctx); err != nil {
		t.Errorf("Health once writes work again: %v; want nil", err)
	}
	if got, err := s.Web().ReservedSeq(ctx); err != nil || got != 0 {
		t.Errorf("ReservedSeq = %d, %v after the refused reserve; want 0", got, err)
	}
}

// TestWebSeqNeverGoesDown: reserving a lower number keeps the higher one,
// and the number survives a reopen.
func TestWebSeqNeverGoesDown(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	for _, n := range []uint64{64, 128, 5} {
		if err := s.Web().ReserveSeq(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s2, err := Open(ctx, Config{Path: s.Path()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, err := s2.Web().ReservedSeq(ctx); err != nil || got != 128 {
		t.Errorf("ReservedSeq after a reopen = %d, %v; want 128", got, err)
	}
}
