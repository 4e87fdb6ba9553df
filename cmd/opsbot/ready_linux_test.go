//go:build linux

package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/opsbot/opsbot/store"
	"github.com/opsbot/opsbot/store/storetest"
)

// /readyz turns 503 naming the database when the database stops answering
// reads (another program holds its read locks), not only when it is
// closed: its check was a `SELECT 1`, which never touches the file, so
// /readyz said ok while every real read waited 10 s.
func TestReadyzNamesADatabaseThatDoesNotAnswerReads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	st, err := store.Open(context.Background(), store.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &readiness{}
	r.Add("database", st.Health)
	if code, rep := readyz(t, r); code != http.StatusOK {
		t.Fatalf("database up: %d %+v", code, rep)
	}
	release, err := storetest.HoldReadLocks(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	code, rep := readyz(t, r)
	if code != http.StatusServiceUnavailable || len(rep.Down) != 1 || rep.Down[0] != "database" || rep.Checks["database"] != "no answer within 1s" {
		t.Errorf("database not answering reads: %d %+v; want 503 naming the database", code, rep)
	}
}
