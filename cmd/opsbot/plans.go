package main

import (
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors/web"
)

// addPlans gives the chat's agent propose_plan, and the bot the plans it
// shows and runs (docs/PLANS.md). Only the chat's agent has the tool: an
// alert investigation is read-only and proposes single commands.
func (rt *parts) addPlans(d *bot.Deps, gate *approvals.Gate, guard *approvals.Guard) {
	d.Plans = bot.NewPlans(bot.PlanDeps{Gate: gate, Guard: guard, Store: rt.store, Platforms: d.Platforms, Platform: web.Platform, Log: rt.log})
	if d.Agent != nil {
		d.Agent.Tools.Add(&tools.ProposePlan{Planner: d.Plans})
	}
}
