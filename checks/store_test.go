package checks_test

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/store"
)

// The checks' tests run against the real SQLite store. store imports
// checks for the rows it keeps, so only this external test package can
// import it: it hands the package's tests their store.
func init() {
	checks.OpenTestStore = func(path string) (checks.TestStore, error) {
		st, err := store.Open(context.Background(), store.Config{Path: path})
		if err != nil {
			return nil, err
		}
		return testStore{st.Checks(), st}, nil
	}
}

// testStore is the store as checks.TestStore: its Checks, with the
// database's clock and Close.
type testStore struct {
	*store.Checks
	db *store.Store
}

// SetNow replaces the store's clock.
func (s testStore) SetNow(now func() time.Time) { s.db.Now = now }

// Close closes the database.
func (s testStore) Close() error { return s.db.Close() }
