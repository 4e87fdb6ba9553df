package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/console"
)

// consoleFront is the bot with the terminal as its one platform: `opsbot
// ask` and `opsbot chat` are the same bot as `opsbot run`, with the same
// sessions, commands, renderer and approval cards, asked y/N here.
type consoleFront struct {
	rt   *parts
	term *console.Terminal
	conn *console.Connector
	bot  *bot.Bot
	user string
	// end stops the bot and the connector, and waits for them.
	end func()
}

// openConsoleFront builds and starts the bot over the terminal.
func openConsoleFront(ctx context.Context, cmd *cobra.Command, cfg *Config, logger *slog.Logger) (*consoleFront, error) {
	rt, err := build(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	f := &consoleFront{rt: rt, term: console.Open(), user: osUser()}
	if w := cmd.OutOrStdout(); w != os.Stdout {
		f.term.Out = w
	}
	f.conn = console.New(f.term, f.user, bot.ActionApprove, bot.ActionDeny)
	f.conn.Hide = func(m connectors.Message) bool { return m.Text == bot.QueuedNote }
	gateCfg := consoleGateConfig(cfg.Approvals, f.user)
	gate := approvals.NewGate(rt.store.Approvals(), gateCfg, approvals.GateOptions{HostGroups: rt.hostGroups})
	guard := rt.guard(approvals.GateApprover{Gate: gate, Store: rt.store.Approvals(), Platform: f.conn.Name(), Groups: rt.hostGroups})
	// The person at the terminal has this machine: bot.access is for chat
	// platforms.
	botCfg := cfg.botConfig()
	botCfg.Access = nil
	d := botStores(rt.store)
	d.Platforms = bot.NewPlatforms(rt.red, logger, f.conn)
	d.Agent, d.Guard, d.Jobs, d.Gate, d.Hosts = rt.newAgent(guard, gateCfg), guard, rt.jobs, gate, rt.hostInfo()
	d.Config, d.Log, d.NoAgentHelp = botCfg, logger, noAgentHelp
	if f.bot, err = bot.New(d); err != nil {
		rt.Close()
		return nil, err
	}
	botCtx, stop := context.WithCancel(ctx)
	connDone := make(chan error, 1)
	go func() { connDone <- f.conn.Start(botCtx, f.bot.Handle) }()
	f.bot.Start(botCtx)
	f.end = func() { stop(); <-connDone; f.bot.Close(); rt.Close() }
	return f, nil
}

// consoleGateConfig: at the terminal the person who asks is the person who
// approves, so self-approval is allowed and the terminal's user is an
// approver; every request is still recorded and audited.
func consoleGateConfig(c approvals.GateConfig, user string) approvals.GateConfig {
	c.AllowSelfApproval = true
	c.Approvers = append(append([]approvals.ApproverConfig(nil), c.Approvers...),
		approvals.ApproverConfig{Console: approvals.UserList{Users: []string{user}}})
	return c
}
