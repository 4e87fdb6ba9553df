package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/opsbot/opsbot/store"
)

func readyz(t *testing.T, r *readiness) (int, readyReport) {
	t.Helper()
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	var rep readyReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("/readyz body is not JSON: %q", rec.Body)
	}
	return rec.Code, rep
}

// /readyz is 200 while the database answers and 503 naming it once it
// does not (here: closed).
func TestReadyzNamesTheDatabaseWhenItIsDown(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	r := &readiness{}
	r.Add("database", st.Ping)
	if code, rep := readyz(t, r); code != http.StatusOK || rep.Status != "ready" || rep.Checks["database"] != "ok" || len(rep.Down) != 0 {
		t.Errorf("database up: %d %+v", code, rep)
	}
	st.Close()
	if code, rep := readyz(t, r); code != http.StatusServiceUnavailable || rep.Status != "not ready" || len(rep.Down) != 1 || rep.Down[0] != "database" {
		t.Errorf("database closed: %d %+v; want 503 naming the database", code, rep)
	}
}

// A check that does not answer within a second is down, even one that
// ignores its context; a check added later (the sandbox's) is run too.
func TestReadyzGivesUpOnACheckAfterASecond(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		stuck := make(chan struct{})
		r := &readiness{}
		r.Add("database", func(context.Context) error { <-stuck; return nil })
		r.Add("sandbox", func(context.Context) error { return nil })
		code, rep := readyz(t, r)
		close(stuck)
		if code != http.StatusServiceUnavailable || rep.Checks["database"] != "no answer within 1s" || rep.Checks["sandbox"] != "ok" {
			t.Errorf("stuck database: %d %+v", code, rep)
		}
	})
}
