package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors/console"
	"github.com/opsbot/opsbot/store"
)

func newAskCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Ask the agent one question; the answer streams to stdout",
		Long: `Run one agent turn in the terminal: the answer streams to stdout as it arrives, tool
activity goes to stderr, and a command that needs approval is asked y/N on the
terminal (without a terminal it is denied, and the model is told so). Ctrl-C
cancels the turn. Exit 0 when the turn completed, 1 when it failed or was cancelled.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			question := strings.TrimSpace(strings.Join(a, " "))
			if question == "" {
				return usageError(errors.New(`ask needs a question, e.g. opsbot ask "how full is the disk on web-1?"`))
			}
			s, err := openConsole(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			return s.turn(cmd.Context(), question)
		},
	}
}

// consoleSession is one terminal conversation.
type consoleSession struct {
	rt    *parts
	term  *console.Terminal
	agent *agent.Agent
	voter *terminalVoter
	sess  agent.SessionInfo
	user  string
	sigs  chan os.Signal
	// answer is the terminal's stdout behind the redactor: the answer is
	// passed on a line at a time, so a secret split across deltas is
	// caught before any of it is printed.
	answer *redact.Stream
}

func openConsole(cmd *cobra.Command) (*consoleSession, error) {
	cfg, err := loadConfigFlag(cmd)
	if err != nil {
		return nil, err
	}
	log, err := cfg.logger(cmd)
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	rt, err := build(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	if rt.provider == nil {
		rt.Close()
		return nil, usageError(errAgentOff)
	}
	s := &consoleSession{rt: rt, term: console.Open(), user: osUser()}
	if w := cmd.OutOrStdout(); w != os.Stdout {
		s.term.Out = w
	}
	s.answer = rt.red.NewWriter(s.term.Out)
	s.term.Out = s.answer
	gate := approvals.NewGate(rt.store, consoleGateConfig(cfg.Approvals, s.user), approvals.GateOptions{HostGroups: rt.hostGroups})
	s.voter = &terminalVoter{term: s.term, gate: gate, store: rt.store, user: s.user, red: rt.red}
	guard := rt.guard(bot.GateApprover{Gate: gate, Store: rt.store, Platform: "console", Groups: rt.hostGroups})
	s.agent = rt.newAgent(guard)
	thread := fmt.Sprintf("%s-%d", cmd.Name(), time.Now().UnixNano())
	st, _, err := rt.store.SessionFor(ctx, store.ThreadKey{Platform: "console", Channel: s.user, Thread: thread})
	if err != nil {
		rt.Close()
		return nil, err
	}
	dir, _ := os.Getwd()
	s.sess = agent.SessionInfo{ID: st.ID, Requester: s.user, Cwd: dir, Platform: "console", Channel: s.user}
	s.sigs = make(chan os.Signal, 1)
	signal.Notify(s.sigs, os.Interrupt)
	return s, nil
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

func (s *consoleSession) close() {
	signal.Stop(s.sigs)
	s.rt.Close()
}

// turn runs one question; Ctrl-C cancels it.
func (s *consoleSession) turn(parent context.Context, question string) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-s.sigs:
			fmt.Fprintln(s.term.Err, "\n· cancelling the turn…")
			cancel()
		case <-stopped:
		}
	}()
	var wg sync.WaitGroup
	err := s.agent.Turn(ctx, s.sess, question, s.emitter(ctx, &wg))
	close(stopped)
	wg.Wait()
	s.answer.Flush()
	s.term.EndAnswer()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitFailure, err: errors.New("cancelled; the turn is not kept in the conversation")}
		}
		return err
	}
	return nil
}

// emitter shows agent events in the terminal and asks for approvals.
func (s *consoleSession) emitter(ctx context.Context, wg *sync.WaitGroup) func(agent.Event) {
	return func(e agent.Event) {
		switch e.Kind {
		case agent.TextDelta:
			s.term.Answer(e.Text)
		case agent.ToolStarted:
			s.term.Activity(s.rt.red.String(e.Summary))
		case agent.ToolFinished:
			s.term.Activity(s.rt.red.String(e.Tool + ": " + e.Summary))
		case agent.Notice:
			s.term.Activity(s.rt.red.String(e.Text))
		case agent.ApprovalPending:
			wg.Go(func() { s.voter.ask(ctx, e.Approval) })
		}
	}
}

// terminalVoter asks the person at the terminal about pending requests and
// records their answer as a vote through the Gate.
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
func (v *terminalVoter) ask(ctx context.Context, p *agent.PendingApproval) {
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
		return // cancelled: the turn is going away
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
