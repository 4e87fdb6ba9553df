package bot

import (
	"context"

	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/store"
)

// storeTrail is the store as executor.Audited's audit trail, as
// cmd/opsbot wires it (its executorStore).
type storeTrail struct{ st *store.Store }

func (s storeTrail) Audit(ctx context.Context, e executor.AuditEntry) error {
	return s.st.Audit().Audit(ctx, store.AuditEntry(e))
}
