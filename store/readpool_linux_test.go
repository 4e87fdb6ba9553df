//go:build linux

package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store/storetest"
)

// TestAReadTheDatabaseDoesNotAnswerFailsInWords: another program holds
// the database's WAL read locks (as its crash recovery does; on a slow
// disk, for long). Before, every read waited SQLite's own retries — 10.0 s,
// then "locking protocol", a 1 s context or a short busy_timeout changed
// nothing — while Ping's `SELECT 1` answered at once. Now a read gives up
// at the read timeout, saying the database is not answering; many reads
// at once all do; Health reports it; and once the locks go, reads answer
// again by themselves.
func TestAReadTheDatabaseDoesNotAnswerFailsInWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	s, err := Open(ctx, Config{Path: path, ReadTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Approvals().PendingApprovals(ctx); err != nil {
		t.Fatal(err)
	}
	release := holdReadLocks(t, path)

	t0 := time.Now()
	_, err = s.Approvals().PendingApprovals(ctx)
	took := time.Since(t0)
	t.Logf("a read with the read locks held: %v after %v", err, took.Round(time.Millisecond))
	notAnswering(t, err)
	// A guard, not the measure: SQLite itself gives up after 10 s.
	if took > 5*time.Second {
		t.Errorf("the read gave up after %v; want about the read timeout (200ms)", took.Round(time.Millisecond))
	}

	var wg sync.WaitGroup
	errs := make([]error, 3*readSlots)
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.Approvals().PendingApprovals(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		notAnswering(t, err)
	}
	notAnswering(t, s.Health(ctx))

	// The reads given up on end as soon as SQLite lets go of them.
	release()
	s.reads.given.Wait()
	if _, err := s.Approvals().PendingApprovals(ctx); err != nil {
		t.Errorf("a read once the locks are gone: %v", err)
	}
	if err := s.Health(ctx); err != nil {
		t.Errorf("Health once the locks are gone: %v", err)
	}
}

// notAnswering checks err is the store's words for a database that does
// not answer.
func notAnswering(t *testing.T, err error) {
	t.Helper()
	var u *Unavailable
	if !errors.As(err, &u) || !strings.Contains(u.Error(), "is not answering") || !strings.Contains(u.Error(), "opsbot.db") {
		t.Fatalf("error = %v; want the database named as not answering", err)
	}
}

// The read pool cannot write: a write through it is refused.
func TestTheReadPoolOnlyQueries(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if _, err := s.read.Exec(`INSERT INTO counters (name, value) VALUES ('x', 1)`); !errors.Is(err, errQueriesOnly) {
		t.Errorf("an insert through the read pool: %v; want it refused", err)
	}
}

// holdReadLocks is storetest.HoldReadLocks, released when the test ends.
func holdReadLocks(t *testing.T, path string) func() {
	t.Helper()
	release, err := storetest.HoldReadLocks(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return release
}
