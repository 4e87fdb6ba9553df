package bot

import (
	"context"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts/executor"
)

// withRequester marks ctx as work asked for by the person of ev: the
// audit trail names them (executor.Audited).
func withRequester(ctx context.Context, ev connectors.Event) context.Context {
	if ev.User.ID == "" {
		return ctx
	}
	return executor.WithRequester(ctx, approvals.Person{Platform: ev.Platform, ID: ev.User.ID}.Key())
}
