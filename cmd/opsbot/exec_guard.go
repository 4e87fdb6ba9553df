package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors/console"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// authorizeExec puts `opsbot hosts exec` through the same policy as the
// bot, once for the whole target (the strictest decision over its hosts
// wins): allowed commands run; denied ones never do; the rest are asked y/N
// at the terminal and recorded through the approvals Gate (without a
// terminal they are refused). A refusal exits with exitNotRun, as an
// unreachable host does: in both the command did not run.
func authorizeExec(ctx context.Context, cmd *cobra.Command, cfg *Config, st *store.Store, f *hosts.Fleet, target, command, dir string) error {
	policy, err := approvals.NewPolicy(policyConfig(cfg))
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
	gate := approvals.NewGate(st, consoleGateConfig(cfg.Approvals, user), approvals.GateOptions{HostGroups: groups})
	term := console.Open()
	term.Out = cmd.ErrOrStderr()
	voter := &terminalVoter{term: term, gate: gate, store: st, user: user, red: cfg.redactor()}
	guard := &approvals.Guard{Policy: bot.PolicyChecker{Policy: policy, Inventory: f.Inventory},
		Approver: bot.GateApprover{Gate: gate, Store: st, Platform: "console", Groups: groups}, Exec: &bot.FleetExecutor{Fleet: f},
		DirOnAllHosts: true}
	var wg sync.WaitGroup
	defer wg.Wait()
	req := approvals.CommandRequest{Target: target, Command: command, Cwd: dir, Requester: approvals.Person{Platform: "console", ID: user}, Channel: user}
	pending := func(p approvals.Pending) { wg.Go(func() { voter.ask(ctx, &p) }) }
	if _, err := guard.Authorize(ctx, req, pending); err != nil {
		if voter.noTerminal.Load() {
			// The refusal is the missing terminal's, not a person's.
			err = errors.New("not run: it needs an approval, and there is no terminal to ask on; run it from a terminal to answer y/N, or ask for it in the chat")
		}
		return &exitError{code: exitNotRun, err: err}
	}
	return nil
}

// auditedExec is r with every command `hosts exec` runs written to the
// audit trail, as the bot's are: the person at the terminal, the host, the
// command and the policy's decision, then how it ended; redacted.
func auditedExec(cfg *Config, st *store.Store, f *hosts.Fleet, r hosts.Runner) hosts.Runner {
	policy, err := approvals.NewPolicy(policyConfig(cfg))
	var checker approvals.HostPolicy
	if err == nil {
		checker = bot.PolicyChecker{Policy: policy, Inventory: f.Inventory}
	}
	return bot.AuditedRunner{Runner: r, Policy: checker, Audit: st, Redactor: cfg.redactor(),
		Actor: approvals.Person{Platform: "console", ID: osUser()}.Key()}
}

// terminalVoter asks the person at the terminal about a pending request of
// `opsbot hosts exec` (which runs without the bot: no thread, no model)
// and records their answer as a vote through the Gate.
type terminalVoter struct {
	term  *console.Terminal
	gate  *approvals.Gate
	store *store.Store
	user  string
	// red redacts the card before it is shown (nil: as it is).
	red *redact.Redactor
	// noTerminal is set when a request was refused for want of a terminal.
	noTerminal atomic.Bool
}

// ask puts a pending request to the person at the terminal and records
// their vote; without a terminal the request is withdrawn (denied).
func (v *terminalVoter) ask(ctx context.Context, p *approvals.Pending) {
	a, err := v.store.Approval(ctx, p.ID)
	if err != nil {
		return
	}
	card := approvals.NewCard(a, approvals.DisplayOptions{}).Text()
	if v.red != nil {
		card = v.red.String(card)
	}
	yes, err := v.term.Confirm(ctx, card, "Run it?")
	if err != nil && !errors.Is(err, console.ErrNoTerminal) {
		return // cancelled
	}
	if errors.Is(err, console.ErrNoTerminal) {
		v.noTerminal.Store(true)
	}
	// Without a terminal nobody can say yes: the request is withdrawn,
	// which a requester may always do, through the Gate so its waiter
	// learns at once.
	vote := approvals.VoteDeny
	if yes {
		vote = approvals.VoteApprove
	}
	res, err := v.gate.Vote(context.WithoutCancel(ctx), p.ID, approvals.Person{Platform: "console", ID: v.user}, vote)
	if err == nil && res.Status != approvals.VoteDecided && res.Status != approvals.VoteCounted {
		v.term.Activity(res.Message())
	}
}
