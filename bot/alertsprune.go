package bot

import (
	"context"
	"time"
)

// deliveriesKept is how long a delivery acted on stays on record: as long
// as the inbox keeps a platform's event ids (eventsKept), for the same
// reason — a sender's retry (PagerDuty's X-Webhook-Id) comes within
// minutes, and is dropped while its first delivery is on record.
const deliveriesKept = eventsKept

// forget drops the deliveries acted on more than DeliveriesKept ago.
func (a *AlertDesk) forget(ctx context.Context) {
	n, err := a.d.Store.ForgetAlertDeliveriesBefore(ctx, a.d.Now().Add(-a.d.DeliveriesKept))
	switch {
	case err != nil && ctx.Err() == nil:
		a.d.Log.Warn("forget old alert deliveries", "err", err)
	case n > 0:
		a.d.Log.Info("forgot old alert deliveries", "deliveries", n, "kept", a.d.DeliveriesKept)
	}
}

// pruneEvery is how often old deliveries are forgotten.
const pruneEvery = time.Hour
