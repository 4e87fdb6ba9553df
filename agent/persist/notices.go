package persist

import (
	"context"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// Notices adapts the store's notification queue for the loop.
type Notices struct{ Store *store.Store }

var _ agent.Notices = Notices{}

// Pending lists what the session's agent has not seen.
func (n Notices) Pending(ctx context.Context, sessionID int64) ([]agent.Notification, error) {
	rows, err := n.Store.Inbox().UninjectedNotifications(ctx, sessionID)
	out := make([]agent.Notification, len(rows))
	for i, r := range rows {
		out[i] = agent.Notification{ID: r.ID, Text: r.Text}
	}
	return out, err
}

// MarkInjected records that the agent saw them.
func (n Notices) MarkInjected(ctx context.Context, ids ...int64) error {
	_, err := n.Store.Inbox().MarkInjected(ctx, ids...)
	return err
}
