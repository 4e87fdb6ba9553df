package agent

import (
	"context"
	"errors"
	"sync"
)

// lastStep is what the last step of a turn is told: it may not call
// tools, so that a turn always ends with an answer.
const lastStep = "[opsbot note, not the person's words] This is the last step of this turn: the step limit is reached and no " +
	"more tools can run. Answer now: summarize what you found, quoting the evidence, and what is left to check."

// maxParallel bounds the calls of one step that run at once: a model
// that asks for twenty diagnostics at a time must not open twenty SSH
// sessions on one host.
const maxParallel = 4

// callState is how far one call of a step got.
type callState int

const (
	notStarted callState = iota // the turn ended before its turn came
	cutShort                    // running when the turn was cancelled
	ran                         // finished
)

// outcome is one call of a step and what became of it.
type outcome struct {
	call  Block
	res   ToolResult
	state callState
}

// dispatch runs a step's tool calls and persists all their results as one
// message, in the model's order. Runs of consecutive calls that ask no
// person run at once (at most maxParallel); a call that may need an
// approval runs alone, after the calls before it and before those after
// it, so that its card is the only one and what it changes is seen by the
// calls the model put after it. When the turn is stopped or runs out of
// time, what happened to each call is recorded first; a shutdown leaves
// the calls unanswered, to be resumed after the restart.
func (a *Agent) dispatch(ctx context.Context, t *turn, calls []Block) error {
	results := Message{Role: RoleUser}
	compact := false
	for i := 0; i < len(calls); {
		n := a.batchLen(t, calls[i:])
		outs := a.runBatch(ctx, t, calls[i:i+n])
		if err := ctx.Err(); err != nil {
			if !errors.Is(context.Cause(ctx), ErrShutdown) {
				a.interrupted(context.WithoutCancel(ctx), t, cutBy(ctx), results, outs, calls[i+n:])
			}
			return err
		}
		for _, o := range outs {
			results.Content = append(results.Content, Block{Type: BlockToolResult, ToolUseID: o.call.ID, Content: o.res.Content, IsError: o.res.IsError})
			compact = compact || o.res.compact
		}
		i += n
	}
	t.sinceTodo++
	t.toolSince = true
	a.remind(t, &results)
	if _, err := a.History.Append(ctx, t.sess.ID, results); err != nil {
		return err
	}
	if compact {
		// After every call of the response is answered: a call left
		// without a result would make the history invalid for both APIs.
		return a.compactNow(ctx, t)
	}
	return nil
}

// batchLen is how many of calls, from the first, run together: the
// consecutive calls that may run at once, or the first call alone. It
// notes a plan update on the turn.
func (a *Agent) batchLen(t *turn, calls []Block) int {
	n := 0
	for n < len(calls) && a.concurrent(t, calls[n]) {
		n++
	}
	n = max(n, 1)
	for _, c := range calls[:n] {
		if a.Tools.plans(c.Name) {
			t.sinceTodo = -1
		}
	}
	return n
}

// concurrent reports whether c may run alongside the step's other calls.
func (a *Agent) concurrent(t *turn, c Block) bool {
	return c.InputError != "" || a.Tools.concurrent(a.toolCall(t, c, t.emit))
}

// toolCall is the ToolCall of block c in turn t, reporting through emit.
func (a *Agent) toolCall(t *turn, c Block, emit func(Event)) ToolCall {
	return ToolCall{ID: c.ID, Name: c.Name, Input: c.Input, Session: t.sess, Emit: emit}
}

// runBatch runs calls, at once when there are several, and returns their
// outcomes in order. It starts them in order and returns when every one
// it started has returned; once the turn is cancelled it starts no more.
func (a *Agent) runBatch(ctx context.Context, t *turn, calls []Block) []outcome {
	outs := make([]outcome, len(calls))
	var mu sync.Mutex
	emit := func(ev Event) { // the turn's caller reads events one at a time
		mu.Lock()
		defer mu.Unlock()
		t.emit(ev)
	}
	slots := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i, c := range calls {
		outs[i].call = c
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			outs[i].res, outs[i].state = a.runCall(ctx, a.toolCall(t, c, emit), c)
		})
	}
	wg.Wait()
	return outs
}

// runCall runs one call with its start and end events: whether it
// finished, or the turn was cancelled while it ran.
func (a *Agent) runCall(ctx context.Context, call ToolCall, c Block) (ToolResult, callState) {
	call.Emit(Event{Kind: ToolStarted, Tool: c.Name, ToolID: c.ID, Summary: a.describe(call), Limit: a.limit(call)})
	res := a.dispatchOne(ctx, call, c)
	if ctx.Err() != nil {
		return res, cutShort
	}
	call.Emit(Event{Kind: ToolFinished, Tool: c.Name, ToolID: c.ID, Summary: res.Summary, IsError: res.IsError, Runs: res.Runs})
	return res, ran
}

// dispatchOne runs one call, unless its arguments could not be read: the
// model is then told why, and calls again (the step limit bounds it).
func (a *Agent) dispatchOne(ctx context.Context, call ToolCall, c Block) ToolResult {
	if c.InputError != "" {
		return Errorf("your arguments for %s were not valid JSON (%s); nothing ran. Call %s again with a JSON object that matches its schema.",
			c.Name, c.InputError, c.Name)
	}
	return a.Tools.Dispatch(ctx, call)
}

// interrupted records the results of a dispatch the time limit or a Stop
// cut: the calls that finished keep their results, those running say they
// were cut (with what they printed), the ones not started say they never
// started.
func (a *Agent) interrupted(ctx context.Context, t *turn, why ending, results Message, outs []outcome, rest []Block) {
	for _, o := range outs {
		results.Content = append(results.Content, a.cutResult(t, o, why))
	}
	for _, c := range rest {
		results.Content = append(results.Content, a.cutResult(t, outcome{call: c}, why))
	}
	a.History.Append(ctx, t.sess.ID, results)
}

// ending says what ended a turn's calls, in the words of their results.
type ending struct {
	reason  string // "the turn reached its time limit"
	summary string // the status line of a call it cut
}

// cutBy is what ended ctx's turn: its time limit, or a person's Stop.
func cutBy(ctx context.Context) ending {
	if errors.Is(context.Cause(ctx), ErrDeadline) {
		return ending{"the turn reached its time limit", "interrupted by the time limit"}
	}
	return ending{"the person stopped the turn", "stopped"}
}

// cutResult is the result block of one call of a step the time limit or
// a Stop cut. A call that ran commands says they may have partly run; one
// that ran none (an approval still awaited, a read) says what it reported.
func (a *Agent) cutResult(t *turn, o outcome, why ending) Block {
	b := Block{Type: BlockToolResult, ToolUseID: o.call.ID, Content: o.res.Content, IsError: o.res.IsError}
	switch o.state {
	case notStarted:
		b.Content, b.IsError = "not run: "+why.reason+" before this call started", true
	case cutShort:
		t.emit(Event{Kind: ToolFinished, Tool: o.call.Name, ToolID: o.call.ID, Summary: why.summary, IsError: true, Runs: o.res.Runs})
		b.Content = "interrupted: " + why.reason + " while this was running, so it may have partly run"
		if len(o.res.Runs) == 0 && o.res.Content != "" {
			b.Content = "interrupted: " + why.reason + " before this call finished"
		}
		if o.res.Content != "" {
			b.Content += "; what it reported:\n" + o.res.Content
		}
		b.IsError = true
	}
	return b
}

// Settle answers the session's unanswered tool calls with why they did not
// run (an approval denied or expired while the turn was cut by a restart),
// so that the model reads it with the next message. It does nothing when
// no call waits.
func (a *Agent) Settle(ctx context.Context, sess SessionInfo, why string) {
	a.settle(ctx, &turn{sess: sess}, why)
}

// settle gives every unanswered tool call a result saying it did not run,
// so that the history stays valid for the next turn.
func (a *Agent) settle(ctx context.Context, t *turn, why string) {
	msgs, _, err := a.History.Load(ctx, t.sess.ID)
	if err != nil {
		return
	}
	calls := pendingToolCalls(msgs)
	if len(calls) == 0 {
		return
	}
	results := Message{Role: RoleUser}
	for _, c := range calls {
		results.Content = append(results.Content, Block{Type: BlockToolResult, ToolUseID: c.ID, Content: why, IsError: true})
	}
	a.History.Append(ctx, t.sess.ID, results)
}

// cardKey holds a turn's card slot: a channel of one.
type cardKey struct{}

// withCardSlot gives the turn that runs in ctx one slot for an approval
// card, unless ctx belongs to a turn already: a subagent shares its
// parent's.
func withCardSlot(ctx context.Context) context.Context {
	if _, ok := ctx.Value(cardKey{}).(chan struct{}); ok {
		return ctx
	}
	return context.WithValue(ctx, cardKey{}, make(chan struct{}, 1))
}

// OneCardAtATime waits until no other call of the turn (its subagents
// included, which run at once) is waiting for people, and holds the turn's
// card slot until release: a tool takes it before it asks for an approval,
// so that people get one card at a time. The error is ctx's when it ends
// first. Outside a turn it does not wait.
func OneCardAtATime(ctx context.Context) (release func(), err error) {
	slot, ok := ctx.Value(cardKey{}).(chan struct{})
	if !ok {
		return func() {}, nil
	}
	select {
	case slot <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-slot }) }, nil
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
}
