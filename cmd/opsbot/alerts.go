package main

import (
	"github.com/opsbot/opsbot/connectors/alerts"
)

// alertIntake is POST /hooks/{name} for the configured alert sources:
// each delivery is recorded in the store, then answered 202; recorded
// tells the bot there is more to act on.
func (rt *parts) alertIntake(m *alerts.Metrics, recorded func()) router {
	for _, w := range rt.cfg.alertWarnings() {
		rt.log.Warn(w.Error())
	}
	return &alerts.Intake{Config: rt.cfg.Alerts, Record: rt.store.Alerts(), Recorded: recorded, Metrics: m,
		Log: rt.log.With("component", "alerts")}
}
