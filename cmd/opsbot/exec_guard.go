package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/console"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// errNoTerminal is why `hosts exec` did not run a command that needs
// approval where nobody can be asked.
var errNoTerminal = errors.New("not run: it needs an approval, and there is no terminal to ask on; run it from a terminal to answer y/N, or ask for it in the chat")

// authorizeExec puts `opsbot hosts exec` through the same Guard as the
// bot, once for the whole target (the strictest decision over its hosts
// wins): allowed commands run; denied ones never do; the rest wait for the
// person at the terminal, asked y/N on the bot's own approval card (the
// terminal is the console connector, and the answer a click the bot
// counts, as in `opsbot chat`). Without a terminal nobody can answer: the
// command is refused before any request opens. A refusal exits with
// exitNotRun, as an unreachable host does: in both the command did not
// run.
func authorizeExec(ctx context.Context, cmd *cobra.Command, cfg *Config, st *store.Store, f *hosts.Fleet, target, command, dir string) error {
	policy, err := policy.NewPolicy(policyConfig(cfg))
	if err != nil {
		return usageError(err)
	}
	user := osUser()
	groups := func(host string) []string {
		if h, ok := f.Inventory.Lookup(host); ok {
			return h.Groups
		}
		return nil
	}
	term := console.Open()
	// The command is the person's own and runs as they run it, outside any
	// sandbox (docs/security-sandbox.md): whether a host has one changes
	// nothing, so the decision does not ask every host first
	// (unaskedSandboxes), which cost a cold fan-out a connect and a probe
	// per host before anything ran, and asked for an approval on a host
	// without bubblewrap for a command that ran unconfined everywhere else.
	checker := withoutAsking(withRemoteSandbox(cfg.Policy, f, policy), f)
	guard := &approvals.Guard{Policy: checker, Approver: nobodyToAsk{}, Exec: &executor.Fleet{Fleet: f}, DirOnAllHosts: true}
	req := approvals.CommandRequest{Target: target, Command: command, Cwd: dir, Requester: approvals.Person{Platform: "console", ID: user}, Channel: user}
	term.Out, term.Err = cmd.ErrOrStderr(), cmd.ErrOrStderr() // stdout is the hosts' output
	var show func(approvals.Pending)
	var cards *terminalCards
	if term.Interactive {
		gate := approvals.NewGate(st.Approvals(), consoleGateConfig(cfg.Approvals, user), approvals.GateOptions{HostGroups: groups})
		cards, err = openTerminalCards(cmd, cfg, st, gate, term, user)
		if err != nil {
			return err
		}
		defer cards.close()
		guard.Approver = approvals.GateApprover{Gate: gate, Store: st.Approvals(), Platform: "console", Groups: groups}
		show = cards.show(ctx)
	}
	_, err = guard.Authorize(ctx, req, show)
	if cards != nil {
		cards.close() // what the vote said comes before the output
	}
	if err != nil {
		if errors.Is(err, errNoTerminal) {
			err = errNoTerminal // the refusal is the missing terminal's, not a person's
		}
		return &exitError{code: exitNotRun, err: err}
	}
	return nil
}

// nobodyToAsk is the Approver where there is no terminal: a command that
// needs people is refused before a request opens that nobody could see.
type nobodyToAsk struct{}

func (nobodyToAsk) Approve(context.Context, approvals.CommandRequest, func(approvals.Pending)) (approvals.Outcome, error) {
	return approvals.Outcome{}, errNoTerminal
}

// terminalCards shows the approval requests of `hosts exec` (which runs
// without the bot: no thread, no model) on the terminal as the bot's
// approval cards, and takes the person's y/N as their vote: the console
// connector asks, and the bot counts the click through its cards, the one
// path every front's votes take.
type terminalCards struct {
	bot  *bot.Bot
	dest connectors.Dest
	stop func()
}

// openTerminalCards starts a bot whose one platform is the terminal, to
// show cards and route clicks; it runs no turn, sweep or schedule.
func openTerminalCards(cmd *cobra.Command, cfg *Config, st *store.Store, gate *approvals.Gate, term *console.Terminal, user string) (*terminalCards, error) {
	log, err := cfg.terminalLogger(cmd)
	if err != nil {
		return nil, err
	}
	conn := console.New(term, user, bot.ActionApprove, bot.ActionDeny)
	d := botStores(st)
	d.Platforms, d.Gate, d.Log = bot.NewPlatforms(cfg.redactor(), log, conn), gate, log
	b, err := bot.New(d)
	if err != nil {
		return nil, err
	}
	life, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Start(life, b.Handle) }()
	thread := fmt.Sprintf("exec-%d", time.Now().UnixNano())
	return &terminalCards{bot: b, dest: connectors.Dest{Platform: conn.Name(), Channel: user, Thread: thread},
		stop: sync.OnceFunc(func() { cancel(); <-done; b.Close() })}, nil
}

// show is the Guard's pending callback: the request's card, on the
// terminal. A request found open from an earlier run is shown again: the
// terminal that saw it is gone.
func (c *terminalCards) show(ctx context.Context) func(approvals.Pending) {
	return func(p approvals.Pending) { c.bot.ShowApproval(ctx, c.dest, p.ID) }
}

// close stops asking and waits for the votes cast to be shown; safe to
// call twice.
func (c *terminalCards) close() { c.stop() }

// auditedExec is r with every command `hosts exec` runs written to the
// audit trail, as the bot's are: the person at the terminal, the host, the
// command and the policy's decision, then how it ended; redacted.
func auditedExec(cfg *Config, st *store.Store, f *hosts.Fleet, r hosts.Runner) hosts.Runner {
	policy, err := policy.NewPolicy(policyConfig(cfg))
	var checker executor.Decider
	if err == nil {
		// The trail's decision, as authorizeExec's: asking no host.
		checker = withoutAsking(withRemoteSandbox(cfg.Policy, f, policy), f)
	}
	return executor.AuditedRunner{Runner: r, Policy: checker, Audit: executorStore{st: st}, Redactor: cfg.redactor(),
		Actor: approvals.Person{Platform: "console", ID: osUser()}.Key()}
}
