package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/console"
)

func newChatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "chat",
		Short: "Talk with opsbot in the terminal: the chat commands, and the agent when a model is set",
		Long: `A conversation in the terminal, one thread across lines, as in the web chat: the
chat commands work with or without a model (help, run <target> <command>, jobs,
job <id>, cancel <job id>, hosts, reset), and any other line is a question for the
agent when a model is configured. A command that needs approval is asked y/N here
(without a terminal it is denied). Ctrl-C stops the running answer or command;
Ctrl-D (or Ctrl-C at the prompt) ends the chat.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			log, err := cfg.logger(cmd)
			if err != nil {
				return err
			}
			return runChat(cmd.Context(), cmd, cfg, log)
		},
	}
}

// runChat runs the bot with the terminal as its one platform.
func runChat(ctx context.Context, cmd *cobra.Command, cfg *Config, logger *slog.Logger) error {
	rt, err := build(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer rt.Close()
	user := osUser()
	term := console.Open()
	if w := cmd.OutOrStdout(); w != os.Stdout {
		term.Out = w
	}
	conn := newTermConn(term, user)
	gate := approvals.NewGate(rt.store, consoleGateConfig(cfg.Approvals, user), approvals.GateOptions{HostGroups: rt.hostGroups})
	guard := rt.guard(bot.GateApprover{Gate: gate, Store: rt.store, Platform: conn.Name(), Groups: rt.hostGroups})
	// The person at the terminal has this machine: bot.access is for chat
	// platforms.
	botCfg := cfg.botConfig()
	botCfg.Access = nil
	b := &bot.Bot{Store: rt.store, Agent: rt.newAgent(guard), Guard: guard, Jobs: rt.jobs, Gate: gate, Hosts: rt.hostInfo(),
		Config: botCfg, Log: logger, NoAgentHelp: noAgentHelp, Redactor: rt.red}
	b.AddConnector(conn)
	botCtx, stop := context.WithCancel(ctx)
	// The handler is in place before the first line can post a card.
	conn.bind(botCtx, b.Handle)
	connDone := make(chan error, 1)
	go func() { connDone <- conn.Start(botCtx, b.Handle) }()
	defer func() { stop(); <-connDone; b.Close() }()
	b.Start(botCtx)

	agentState := "agent off: the chat commands work; set ANTHROPIC_API_KEY or OPENAI_API_KEY/OPENAI_BASE_URL for questions"
	if rt.provider != nil {
		agentState = "agent: " + rt.model
	}
	fmt.Fprintf(term.Err, "opsbot chat (%s). Type help for the commands. Ctrl-C stops a command, Ctrl-D ends.\n", agentState)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	thread := fmt.Sprintf("chat-%d", time.Now().UnixNano())
	for n := 1; ; n++ {
		line, err := readLine(ctx, term, sigs)
		if err != nil {
			fmt.Fprintln(term.Err)
			if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		ev := connectors.Event{ID: thread + "-" + strconv.Itoa(n), Kind: connectors.EventMessage, Platform: conn.Name(),
			Channel: user, Thread: thread, User: connectors.User{ID: user, Name: user}, Text: line, Mention: true}
		conn.expect()
		b.Handle(ctx, ev)
		conn.wait(ctx, sigs, func() {
			b.Handle(ctx, connectors.Event{Kind: connectors.EventMessage, Platform: conn.Name(), Channel: user, Thread: thread,
				User: ev.User, Text: "cancel", Mention: true})
		})
	}
}

// readLine reads the next line; Ctrl-C at the prompt ends the chat.
func readLine(ctx context.Context, term *console.Terminal, sigs <-chan os.Signal) (string, error) {
	lineCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-lineCtx.Done():
		}
	}()
	return term.ReadLine(lineCtx, "\nyou> ")
}

// termConn is the terminal as a chat platform: what the bot posts is
// written out (text to stdout, context lines and fields to stderr), edits
// that extend a message print only what is new, and an approval card is
// asked y/N, the answer going back to the bot as the button's click.
type termConn struct {
	term *console.Terminal
	user string

	mu      sync.Mutex
	handler connectors.Handler
	ctx     context.Context
	next    int
	shown   map[string]connectors.Message // what each message shows now
	done    chan struct{}                 // a message without vote buttons was finished
	asks    []context.CancelFunc          // questions still waiting for an answer
	closed  bool                          // Start has ended: no more questions
	asking  sync.WaitGroup
}

var (
	_ connectors.Connector = (*termConn)(nil)
	_ connectors.Streamer  = (*termConn)(nil)
)

// botQueuedNote is the bot's reply to a message that waits behind its
// thread's running work (bot's queuedNote).
const botQueuedNote = "queued: runs after the current answer"

func newTermConn(term *console.Terminal, user string) *termConn {
	return &termConn{term: term, user: user, shown: map[string]connectors.Message{}, done: make(chan struct{}, 64)}
}

// Name is the platform's name, as approvals and sessions record it.
func (c *termConn) Name() string { return "console" }

// Limits: a terminal takes any length, and edits cost nothing. An answer
// is a stream: the prompt comes back when it stops.
func (c *termConn) Limits() connectors.Limits {
	return connectors.Limits{MaxText: 1 << 20, EditInterval: 100 * time.Millisecond, MaxButtons: 5,
		NativeStreaming: true, StreamEdits: true}
}

// Start keeps the handler for the clicks it makes until ctx ends, then
// waits for the questions still open (they end with ctx).
func (c *termConn) Start(ctx context.Context, h connectors.Handler) error {
	c.bind(ctx, h)
	<-ctx.Done()
	c.mu.Lock()
	c.closed = true // no question starts after this
	c.mu.Unlock()
	c.asking.Wait()
	return nil
}

// bind sets where the answers to approval questions go.
func (c *termConn) bind(ctx context.Context, h connectors.Handler) {
	c.mu.Lock()
	c.handler, c.ctx = h, ctx
	c.mu.Unlock()
}

// Post writes a complete message, which ends what the line asked for; an
// approval card is asked at once.
func (c *termConn) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	ref, err := c.StartStream(ctx, d, m)
	if err == nil {
		c.finish(ref)
	}
	return ref, err
}

// StartStream writes a message that is being written.
func (c *termConn) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	c.mu.Lock()
	c.next++
	ref := connectors.Ref{Platform: c.Name(), Channel: d.Channel, Thread: d.Thread, ID: strconv.Itoa(c.next)}
	c.mu.Unlock()
	if m.Text == botQueuedNote {
		// The chat sends a line once the last one's answer is finished,
		// which can be a moment before the bot's worker is idle: the line
		// then queues for that moment. Nothing to say, nor to wait for.
		c.mu.Lock()
		c.shown[ref.ID] = m
		c.mu.Unlock()
		return ref, nil
	}
	if vote := voteButtons(m); vote != nil {
		c.mu.Lock()
		c.shown[ref.ID] = m
		c.mu.Unlock()
		c.ask(ref, m, vote)
		return ref, nil
	}
	c.show(ref.ID, m)
	return ref, nil
}

// Edit prints what changed: new text at the end, a new context line.
func (c *termConn) Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	c.show(ref.ID, m)
	return nil
}

// AppendStream prints what the answer grew by.
func (c *termConn) AppendStream(ctx context.Context, ref connectors.Ref, text string) error {
	c.mu.Lock()
	m := c.shown[ref.ID]
	c.mu.Unlock()
	m.Text += text
	c.show(ref.ID, m)
	return nil
}

// StopStream shows the answer's last form and ends what the line asked
// for.
func (c *termConn) StopStream(ctx context.Context, ref connectors.Ref, final connectors.Message) error {
	c.show(ref.ID, final)
	c.finish(ref)
	return nil
}

// finish ends a message; one without vote buttons ends what the line
// asked for, and the prompt comes back.
func (c *termConn) finish(ref connectors.Ref) {
	c.mu.Lock()
	m := c.shown[ref.ID]
	c.mu.Unlock()
	if voteButtons(m) != nil || m.Text == botQueuedNote {
		return
	}
	c.term.EndAnswer()
	select {
	case c.done <- struct{}{}:
	default:
	}
}

func (c *termConn) show(id string, m connectors.Message) {
	c.mu.Lock()
	before, seen := c.shown[id]
	c.shown[id] = m
	c.mu.Unlock()
	if voteButtons(before) != nil {
		// A decided card: its context says how.
		if m.Context != before.Context && m.Context != "" {
			c.term.Activity(m.Context)
		}
		return
	}
	switch {
	case strings.HasPrefix(m.Text, before.Text):
		c.term.Answer(m.Text[len(before.Text):])
	default: // rewritten: show it again whole
		c.term.EndAnswer()
		c.term.Answer(m.Text)
	}
	if !seen {
		for _, f := range m.Fields {
			c.term.Activity(f.Title + ": " + f.Value)
		}
	}
	if m.Context != before.Context && m.Context != "" {
		c.term.Activity(m.Context)
	}
}

// ask puts an approval card to the person at the terminal and sends the
// answer back as a click on Approve or Deny. Without a terminal the answer
// is Deny.
func (c *termConn) ask(ref connectors.Ref, m connectors.Message, vote map[string]connectors.Button) {
	c.mu.Lock()
	h, ctx := c.handler, c.ctx
	if h == nil || c.closed {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	c.asks = append(c.asks, cancel)
	c.asking.Add(1)
	c.mu.Unlock()
	text := m.Text
	for _, f := range m.Fields {
		text += "\n" + f.Title + ": " + f.Value
	}
	go func() {
		defer c.asking.Done()
		yes, err := c.term.Confirm(ctx, text, "Run it?")
		if err != nil && !errors.Is(err, console.ErrNoTerminal) {
			return // the line was stopped, or the chat is ending
		}
		b := vote[bot.ActionDeny]
		if yes {
			b = vote[bot.ActionApprove]
		}
		h(ctx, connectors.Event{Kind: connectors.EventAction, Platform: c.Name(), Channel: ref.Channel, Thread: ref.Thread,
			User: connectors.User{ID: c.user, Name: c.user}, ActionID: b.ActionID, Value: b.Value, Ref: ref,
			Respond: func(_ context.Context, text string) error { c.term.Activity(text); return nil }})
	}()
}

// voteButtons returns the Approve and Deny buttons of an approval card,
// nil for any other message.
func voteButtons(m connectors.Message) map[string]connectors.Button {
	var out map[string]connectors.Button
	for _, b := range m.Buttons {
		if b.ActionID == bot.ActionApprove || b.ActionID == bot.ActionDeny {
			if out == nil {
				out = map[string]connectors.Button{}
			}
			out[b.ActionID] = b
		}
	}
	return out
}

// expect forgets earlier finishes: the next one ends the line about to
// be sent.
func (c *termConn) expect() {
	for {
		select {
		case <-c.done:
		default:
			return
		}
	}
}

// wait returns when what the line asked for is finished; Ctrl-C meanwhile
// calls stop (and waits on). A question still open then (its command was
// stopped) is withdrawn, so that it does not take the next line.
func (c *termConn) wait(ctx context.Context, sigs <-chan os.Signal, stop func()) {
	defer func() {
		c.mu.Lock()
		for _, cancel := range c.asks {
			cancel()
		}
		c.asks = nil
		c.mu.Unlock()
	}()
	for {
		select {
		case <-c.done:
			return
		case <-ctx.Done():
			return
		case <-sigs:
			fmt.Fprintln(c.term.Err, "\n· stopping…")
			stop()
		}
	}
}
