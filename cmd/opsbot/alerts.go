package main

import (
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors/alerts"
)

// newAlerts builds what the alerts section asks for: the desk that keeps a
// thread per alert group, its investigator when a model is configured,
// and the intake at POST /hooks/{name}. With no source it builds nothing
// (a nil desk and router).
//
// The investigations run on an agent of their own, whose guard has
// bot.AlertProposals as its approver: a command that needs people is
// posted as a proposal and the turn told at once it did not run, so an
// alert turn runs only what the policy allows. Its turns' requester is
// "alert:SOURCE" (bot.IsAlertTurn); a budget for alert turns goes on
// this agent. Each investigation is its thread's turn on b (a mention
// there waits for it, and Stop stops it).
func (rt *parts) newAlerts(platforms *bot.Platforms, b *bot.Bot) (*bot.AlertDesk, router, error) {
	if !rt.cfg.Alerts.Enabled() {
		return nil, nil, nil
	}
	m, err := alerts.NewMetrics(rt.metrics.reg)
	if err != nil {
		return nil, nil, err
	}
	log := rt.log.With("component", "alerts")
	var inv *bot.Investigator
	if rt.provider != nil {
		proposals := bot.NewAlertProposals(platforms)
		gateCfg, _ := webGateConfig(rt.cfg)
		inv = &bot.Investigator{Agent: rt.newAgent(rt.guard(proposals), gateCfg), Sessions: rt.store.Sessions(),
			Memory: rt.store.Memory(), Hosts: rt.hostInfo(), Proposals: proposals, Threads: b, Metrics: m, Log: log}
	}
	desk := bot.NewAlertDesk(bot.AlertDeps{Store: rt.store.Alerts(), Platforms: platforms, Config: rt.cfg.Alerts,
		Investigator: inv, Metrics: m, Log: log})
	return desk, rt.alertIntake(m, desk.Kick), nil
}

// alertIntake is POST /hooks/{name} for the configured alert sources:
// each delivery is recorded in the store, then answered 202; recorded
// tells the desk there is more to act on.
func (rt *parts) alertIntake(m *alerts.Metrics, recorded func()) router {
	for _, w := range rt.cfg.alertWarnings() {
		rt.log.Warn(w.Error())
	}
	return &alerts.Intake{Config: rt.cfg.Alerts, Record: rt.store.Alerts(), Recorded: recorded, Metrics: m,
		Log: rt.log.With("component", "alerts")}
}
