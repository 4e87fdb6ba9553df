package approvals_test

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// The Gate's tests run against the real SQLite store. store imports
// approvals for the rows it keeps, so only this external test package
// can import it: it hands the package's tests their store.
func init() {
	approvals.OpenTestStore = func(path string, now func() time.Time) (approvals.TestStore, error) {
		st, err := store.Open(context.Background(), store.Config{Path: path})
		if err != nil {
			return nil, err
		}
		if now != nil {
			st.Now = now
		}
		return testStore{st.Approvals(), st}, nil
	}
}

// testStore is the store as approvals.TestStore: its Approvals, with
// the audit trail to read and the database to close.
type testStore struct {
	*store.Approvals
	db *store.Store
}

// Close closes the database.
func (s testStore) Close() error { return s.db.Close() }

// AuditActions lists the actions in the subject's audit trail.
func (s testStore) AuditActions(ctx context.Context, subject string) ([]string, error) {
	trail, err := s.db.Audit().AuditTrail(ctx, subject)
	actions := make([]string, len(trail))
	for i, e := range trail {
		actions[i] = e.Action
	}
	return actions, err
}
