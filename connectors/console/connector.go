package console

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// Connector is the terminal as a chat platform, for `opsbot ask` and
// `opsbot chat`: what the bot posts is written out (text to stdout,
// context lines and fields to stderr), an edit that extends a message
// prints only what is new, and an approval card is asked y/N, the answer
// going back to the bot as a click on its button. The lines a person types
// are sent with Say.
type Connector struct {
	// Term is the terminal.
	Term *Terminal
	// User is the person at the terminal, as sessions and approvals
	// record them.
	User string
	// Approve and Deny are the action ids of an approval card's buttons:
	// a message that carries them is asked y/N.
	Approve, Deny string
	// Hide reports a message not worth showing (nil: none is), such as
	// the bot's note that a line waits behind the last one's answer: the
	// prompt comes back when an answer is finished, a moment before the
	// bot is idle.
	Hide func(connectors.Message) bool

	mu       sync.Mutex
	bound    chan struct{} // closed once Start has the handler
	handler  connectors.Handler
	ctx      context.Context
	next     int
	shown    map[string]connectors.Message // what each message shows now
	md       map[string]*mdStream          // each message's text, converted for the terminal as it grows
	threads  map[string]string             // message id → thread
	finished chan string                   // threads whose message without vote buttons was finished
	asks     []context.CancelFunc          // questions still waiting for an answer
	closed   bool                          // Start has ended: no more questions
	asking   sync.WaitGroup
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Streamer  = (*Connector)(nil)
)

// New returns the terminal's connector for user; approve and deny are the
// bot's action ids of a card's Approve and Deny buttons.
func New(term *Terminal, user, approve, deny string) *Connector {
	return &Connector{Term: term, User: user, Approve: approve, Deny: deny}
}

// Name is the platform's name, as approvals and sessions record it.
func (c *Connector) Name() string { return "console" }

// Limits: a terminal takes any length, and edits cost nothing. An answer
// is a stream: the prompt comes back when it stops. Every status line
// printed stays in the scrollback, so no summary of what ran is needed.
func (c *Connector) Limits() connectors.Limits {
	return connectors.Limits{MaxText: 1 << 20, EditInterval: 100 * time.Millisecond, MaxButtons: 5,
		NativeStreaming: true, StreamEdits: true, KeepsStatus: true}
}

// Start keeps the handler for the lines and clicks it sends until ctx
// ends, then waits for the questions still open (they end with ctx).
func (c *Connector) Start(ctx context.Context, h connectors.Handler) error {
	c.bind(ctx, h)
	<-ctx.Done()
	c.mu.Lock()
	c.closed = true // no question starts after this
	c.mu.Unlock()
	c.asking.Wait()
	return nil
}

// bind sets where lines and the answers to approval questions go.
func (c *Connector) bind(ctx context.Context, h connectors.Handler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	if c.handler == nil {
		c.handler, c.ctx = h, ctx
		close(c.bound)
	}
}

// init makes the maps; c.mu is held.
func (c *Connector) init() {
	if c.shown == nil {
		c.shown, c.threads, c.finished = map[string]connectors.Message{}, map[string]string{}, make(chan string, 64)
		c.md = map[string]*mdStream{}
		c.bound = make(chan struct{})
	}
}

// handlerOf waits for Start to have the bot's handler, or for ctx.
func (c *Connector) handlerOf(ctx context.Context) connectors.Handler {
	c.mu.Lock()
	c.init()
	bound := c.bound
	c.mu.Unlock()
	select {
	case <-bound:
	case <-ctx.Done():
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handler
}

// Line is what a person typed, for Say.
type Line struct {
	// Thread is the conversation the line belongs to.
	Thread string
	// ID is the line's id, unique in the thread.
	ID   string
	Text string
	// Question sends the text to the agent, never as a chat command
	// (`opsbot ask`).
	Question bool
}

// Say sends a line to the bot, as the terminal's person (Start must run
// meanwhile), and returns when what it asked for is finished, or ctx ends. An interrupt meanwhile
// (Ctrl-C) sends "cancel" to stop the running work, and Say goes on
// waiting for it to end. A question still open when Say returns (its
// command was stopped) is withdrawn, so that it does not take the next
// line.
func (c *Connector) Say(ctx context.Context, l Line, interrupt <-chan os.Signal) {
	h := c.handlerOf(ctx)
	if h == nil {
		return
	}
	c.forget()
	user := connectors.User{ID: c.User, Name: c.User}
	if err := h(ctx, connectors.Event{ID: l.ID, Kind: connectors.EventMessage, Platform: c.Name(), Channel: c.User, Thread: l.Thread,
		User: user, Text: l.Text, Mention: true, Question: l.Question}); err != nil {
		// Not taken: nothing will finish it.
		c.Term.Answer(err.Error() + "; nothing was done with it: say it again.")
		c.Term.EndAnswer()
		return
	}
	defer c.withdraw()
	for {
		select {
		case t := <-c.finished:
			if t == l.Thread {
				return
			}
		case <-ctx.Done():
			return
		case <-interrupt:
			c.Term.Activity("stopping…")
			h(ctx, connectors.Event{Kind: connectors.EventMessage, Platform: c.Name(), Channel: c.User, Thread: l.Thread,
				User: user, Text: "cancel", Mention: true})
		}
	}
}

// forget drops earlier finishes: the next one of the thread ends the
// line about to be sent.
func (c *Connector) forget() {
	for {
		select {
		case <-c.finished:
		default:
			return
		}
	}
}

// signal says that thread's answer is finished.
func (c *Connector) signal(thread string) {
	select {
	case c.finished <- thread:
	default:
	}
}

// withdraw cancels the questions still open.
func (c *Connector) withdraw() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.asks {
		cancel()
	}
	c.asks = nil
}

// Post writes a complete message, which ends what the line asked for; an
// approval card is asked at once.
func (c *Connector) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	ref, err := c.StartStream(ctx, d, m)
	if err == nil {
		c.finish(ref)
	}
	return ref, err
}

// StartStream writes a message that is being written.
func (c *Connector) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	c.mu.Lock()
	c.init()
	c.next++
	ref := connectors.Ref{Platform: c.Name(), Workspace: d.Workspace, Channel: d.Channel, Thread: d.Thread, ID: strconv.Itoa(c.next)}
	c.threads[ref.ID] = d.Thread
	c.mu.Unlock()
	if c.Hide != nil && c.Hide(m) {
		c.mu.Lock()
		c.shown[ref.ID] = m
		c.mu.Unlock()
		return ref, nil
	}
	if vote := c.voteButtons(m); vote != nil {
		c.mu.Lock()
		c.shown[ref.ID] = m
		c.mu.Unlock()
		c.ask(ctx, ref, m, vote)
		return ref, nil
	}
	c.show(ref.ID, m, false)
	return ref, nil
}

// Edit prints what changed: new text at the end, a new context line.
func (c *Connector) Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	c.show(ref.ID, m, true)
	return nil
}

// AppendStream prints what the answer grew by.
func (c *Connector) AppendStream(ctx context.Context, ref connectors.Ref, text string) error {
	c.mu.Lock()
	m := c.shown[ref.ID]
	c.mu.Unlock()
	m.Text += text
	c.show(ref.ID, m, false)
	return nil
}

// StopStream shows the answer's last form and ends what the line asked
// for.
func (c *Connector) StopStream(ctx context.Context, ref connectors.Ref, final connectors.Message) error {
	c.show(ref.ID, final, true)
	c.finish(ref)
	return nil
}

// finish ends a message; one without vote buttons ends what the line
// asked for, and the prompt comes back.
func (c *Connector) finish(ref connectors.Ref) {
	c.mu.Lock()
	m, thread := c.shown[ref.ID], c.threads[ref.ID]
	md := c.md[ref.ID]
	c.mu.Unlock()
	if md != nil {
		c.Term.Answer(md.write("", true))
	}
	if c.voteButtons(m) != nil || (c.Hide != nil && c.Hide(m)) {
		return
	}
	c.Term.EndAnswer()
	c.signal(thread)
}

// show prints what m adds to what message id showed, its Markdown
// converted for the terminal; flush prints its last line even if it may
// still grow.
func (c *Connector) show(id string, m connectors.Message, flush bool) {
	m = plain(m)
	c.mu.Lock()
	before, seen := c.shown[id]
	c.shown[id] = m
	md := c.md[id]
	rewritten := md == nil || !strings.HasPrefix(m.Text, before.Text)
	if rewritten {
		md = &mdStream{styled: c.Term.Styled}
		c.md[id] = md
		before.Text = ""
	}
	c.mu.Unlock()
	if c.voteButtons(before) != nil {
		// A decided card: its context says how.
		c.context(before.Context, m.Context)
		return
	}
	if rewritten && seen { // show it again whole
		c.Term.EndAnswer()
	}
	c.Term.Answer(md.write(m.Text[len(before.Text):], flush))
	if !seen {
		for _, f := range m.Fields {
			c.Term.Activity(f.Title + ": " + renderMarkdown(f.Value, false))
		}
	}
	c.context(before.Context, m.Context)
}

// context prints what a message's context line added to its last one.
// The bot keeps the last few status lines there, so the new one is the
// old one without some of its first lines, plus the new lines: the
// scrollback has the rest.
func (c *Connector) context(before, now string) {
	if now == before || now == "" {
		return
	}
	for _, line := range added(strings.Split(before, "\n"), strings.Split(now, "\n")) {
		if line != "" {
			c.Term.Activity(renderLine(line, false))
		}
	}
}

// added is the lines of now after the longest end of old it begins with.
func added(old, now []string) []string {
	for k := range old {
		if tail := old[k:]; len(tail) <= len(now) && slices.Equal(tail, now[:len(tail)]) {
			return now[len(tail):]
		}
	}
	return now
}

// plain renders mentions as @name: a terminal has no other way.
func plain(m connectors.Message) connectors.Message {
	m.Text, m.Context = connectors.PlainMentions(m.Text), connectors.PlainMentions(m.Context)
	if len(m.Fields) > 0 {
		fields := make([]connectors.Field, len(m.Fields))
		for i, f := range m.Fields {
			fields[i] = connectors.Field{Title: connectors.PlainMentions(f.Title), Value: connectors.PlainMentions(f.Value)}
		}
		m.Fields = fields
	}
	return m
}

// ask puts an approval card to the person at the terminal and sends the
// answer back as a click on Approve or Deny. Without a terminal the answer
// is Deny. A card posted before Start has the bot's handler waits for it
// (or for ctx): its answer has nowhere to go before.
func (c *Connector) ask(ctx context.Context, ref connectors.Ref, m connectors.Message, vote map[string]connectors.Button) {
	if c.handlerOf(ctx) == nil {
		return
	}
	c.mu.Lock()
	h, life := c.handler, c.ctx
	if h == nil || c.closed {
		c.mu.Unlock()
		return
	}
	// The question lives as long as the connector, not the post.
	ctx, cancel := context.WithCancel(life)
	c.asks = append(c.asks, cancel)
	c.asking.Add(1)
	c.mu.Unlock()
	m = plain(m)
	text := strings.TrimRight(renderMarkdown(m.Text, false), "\n")
	for _, f := range m.Fields {
		text += "\n" + f.Title + ": " + renderMarkdown(f.Value, false)
	}
	go func() {
		defer c.asking.Done()
		yes, err := c.Term.Confirm(ctx, text, "Run it?")
		if err != nil && !errors.Is(err, ErrNoTerminal) {
			return // the line was stopped, or the chat is ending
		}
		b := vote[c.Deny]
		if yes {
			b = vote[c.Approve]
		}
		h(ctx, connectors.Event{Kind: connectors.EventAction, Platform: c.Name(), Channel: ref.Channel, Thread: ref.Thread,
			User: connectors.User{ID: c.User, Name: c.User}, ActionID: b.ActionID, Value: b.Value, Ref: ref,
			Respond: func(_ context.Context, text string) error {
				c.Term.Activity(renderMarkdown(connectors.PlainMentions(text), false))
				return nil
			}})
	}()
}

// voteButtons returns the Approve and Deny buttons of an approval card,
// nil for any other message.
func (c *Connector) voteButtons(m connectors.Message) map[string]connectors.Button {
	var out map[string]connectors.Button
	for _, b := range m.Buttons {
		if b.ActionID == c.Approve || b.ActionID == c.Deny {
			if out == nil {
				out = map[string]connectors.Button{}
			}
			out[b.ActionID] = b
		}
	}
	return out
}
