package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Notices is where background-job notifications wait for the agent; they
// are injected before its next model call.
type Notices interface {
	Pending(ctx context.Context, sessionID int64) ([]Notification, error)
	MarkInjected(ctx context.Context, ids ...int64) error
}

// Notification is one piece of news for the agent (a job that ended).
type Notification struct {
	ID   int64
	Text string
}

// Agent runs turns: the model streams, asks for tools, reads their results,
// until it answers. One Agent serves many sessions; a session must not run
// two turns at once (the caller queues them).
type Agent struct {
	Provider Provider
	Tools    *Registry
	History  History
	Notices  Notices // optional
	// System builds the system prompt for a session.
	System func(SessionInfo) string

	Model       string
	MaxTokens   int           // per model call (default 4096)
	MaxSteps    int           // model calls per turn (default 20)
	TurnTimeout time.Duration // default 10m
	// KeepToolResults is how many recent tool results stay whole in a
	// call (default 3); older ones become placeholders.
	KeepToolResults int
	// CompactAt is the estimated token count of the history above which
	// it is replaced by a model-written summary (0: 100,000).
	CompactAt int
	// RemindAfter is how many steps without a todo update bring a reminder
	// (default 3), when a todo tool is registered.
	RemindAfter int
}

// ErrMaxSteps ends a turn that used all its steps.
var ErrMaxSteps = errors.New("agent: the turn reached its step limit")

// ErrDeadline ends a turn that ran out of time.
var ErrDeadline = errors.New("agent: the turn reached its time limit")

// ErrShutdown is the cancel cause of a turn stopped because the process is
// shutting down (context.WithCancelCause). Unlike a person's Stop it keeps
// the turn's history: a tool call waiting for an approval then resumes
// after the restart, when the approval is decided.
var ErrShutdown = errors.New("agent: opsbot is shutting down")

// Turn runs one turn: the user's text, then as many steps as it takes. It
// reports through emit and returns when the turn ends. Cancelling ctx rolls
// the history back to before the turn: nothing of it stays.
func (a *Agent) Turn(ctx context.Context, sess SessionInfo, text string, emit func(Event)) error {
	msgs, start, err := a.History.Load(ctx, sess.ID)
	if err != nil {
		return a.fail(emit, err)
	}
	if len(pendingToolCalls(msgs)) > 0 {
		// Calls a crash or a shutdown left unanswered: the new message
		// supersedes them, and both APIs refuse a call without a result.
		a.settle(ctx, &turn{sess: sess}, "not run: interrupted, and superseded by a new message")
		if _, start, err = a.History.Load(ctx, sess.ID); err != nil {
			return a.fail(emit, err)
		}
	}
	if _, err := a.History.Append(ctx, sess.ID, userText(text)); err != nil {
		return a.fail(emit, err)
	}
	return a.run(ctx, sess, start, emit)
}

// Resume continues a session whose last message asked for tools that have
// no results yet, as a process that restarted mid-turn finds it: the tools
// are dispatched (an approval decided meanwhile is found by its gate) and
// the turn goes on. It does nothing when there is nothing to resume.
func (a *Agent) Resume(ctx context.Context, sess SessionInfo, emit func(Event)) (resumed bool, err error) {
	msgs, last, err := a.History.Load(ctx, sess.ID)
	if err != nil {
		return false, a.fail(emit, err)
	}
	if len(pendingToolCalls(msgs)) == 0 {
		return false, nil
	}
	return true, a.run(ctx, sess, last, emit)
}

// turn is the state of one running turn.
type turn struct {
	sess      SessionInfo
	emit      func(Event)
	rollback  int64 // the seq to roll back to on cancel
	usage     Usage
	sinceTodo int
}

func (a *Agent) run(parent context.Context, sess SessionInfo, start int64, emit func(Event)) error {
	ctx, cancel := context.WithTimeout(parent, a.turnTimeout())
	defer cancel()
	t := &turn{sess: sess, emit: emit, rollback: start}
	err := a.steps(ctx, t)
	switch {
	case err == nil:
		emit(Event{Kind: TurnDone, Usage: t.usage})
		return nil
	case parent.Err() != nil && errors.Is(context.Cause(parent), ErrShutdown):
		emit(Event{Kind: TurnError, Err: ErrShutdown})
		return parent.Err()
	case parent.Err() != nil:
		// Cancelled by the caller: undo the turn. The rollback must land
		// even though ctx is gone.
		if rbErr := a.History.Rollback(context.WithoutCancel(parent), sess.ID, t.rollback); rbErr != nil {
			return a.fail(emit, fmt.Errorf("agent: roll back cancelled turn: %w", rbErr))
		}
		emit(Event{Kind: TurnError, Err: parent.Err()})
		return parent.Err()
	case ctx.Err() != nil:
		a.settle(context.WithoutCancel(parent), t, "not run: the turn reached its time limit")
		return a.fail(emit, ErrDeadline)
	}
	return a.fail(emit, err)
}

// steps is the loop: call the model, run the tools it asks for, repeat.
func (a *Agent) steps(ctx context.Context, t *turn) error {
	for step := 0; step < a.maxSteps(); step++ {
		msgs, _, err := a.History.Load(ctx, t.sess.ID)
		if err != nil {
			return err
		}
		if calls := pendingToolCalls(msgs); len(calls) > 0 {
			// Resumed: the tools were asked for before a restart.
			if err := a.dispatch(ctx, t, calls); err != nil {
				return err
			}
			continue
		}
		if msgs, err = a.beforeCall(ctx, t, msgs); err != nil {
			return err
		}
		reply, stop, err := a.call(ctx, t, msgs)
		if err != nil {
			return err
		}
		calls := pendingToolCalls([]Message{reply})
		if stop != StopToolUse || len(calls) == 0 {
			if stop == StopMaxTokens {
				t.emit(Event{Kind: Notice, Text: "the answer was cut at the model's output limit"})
			}
			return nil
		}
		if err := a.dispatch(ctx, t, calls); err != nil {
			return err
		}
	}
	a.settle(ctx, t, "not run: the turn reached its step limit")
	return fmt.Errorf("%w (%d model calls)", ErrMaxSteps, a.maxSteps())
}

// beforeCall injects what the agent must see before its next call (job
// notifications, the todo reminder), compacts when the history grew too
// large, and returns the history to send.
func (a *Agent) beforeCall(ctx context.Context, t *turn, msgs []Message) ([]Message, error) {
	var inject []Block
	ids, notes, err := a.pendingNotices(ctx, t)
	if err != nil {
		return nil, err
	}
	inject = append(inject, notes...)
	if a.Tools.has(todoToolName) && t.sinceTodo >= a.remindAfter() {
		inject = append(inject, Block{Type: BlockText, Text: "<reminder>Update your todos.</reminder>"})
		t.sinceTodo = 0
	}
	if len(inject) > 0 {
		m := Message{Role: RoleUser, Content: inject}
		if _, err := a.History.Append(ctx, t.sess.ID, m); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
		if len(ids) > 0 && a.Notices != nil {
			if err := a.Notices.MarkInjected(ctx, ids...); err != nil {
				return nil, err
			}
		}
	}
	if estimateAll(msgs) > a.compactAt() {
		if err := a.compactNow(ctx, t); err != nil {
			return nil, err
		}
		msgs, _, err = a.History.Load(ctx, t.sess.ID)
	}
	return msgs, err
}

// pendingNotices fetches the session's uninjected notifications.
func (a *Agent) pendingNotices(ctx context.Context, t *turn) ([]int64, []Block, error) {
	if a.Notices == nil || t.sess.ID == 0 {
		return nil, nil, nil
	}
	notes, err := a.Notices.Pending(ctx, t.sess.ID)
	if err != nil {
		return nil, nil, err
	}
	var ids []int64
	var blocks []Block
	for _, n := range notes {
		ids = append(ids, n.ID)
		blocks = append(blocks, Block{Type: BlockText, Text: "<background-job-notification>\n" + n.Text + "\n</background-job-notification>"})
		t.emit(Event{Kind: Notice, Text: n.Text})
	}
	return ids, blocks, nil
}

// call streams one model response, forwards its text, and persists it.
func (a *Agent) call(ctx context.Context, t *turn, msgs []Message) (Message, StopReason, error) {
	req := Request{Model: a.Model, System: a.system(t.sess), Messages: prepare(msgs, a.keep()),
		Tools: a.Tools.Specs(), MaxTokens: a.maxTokens()}
	reply, stop, usage, streamErr := collect(ctx, a.Provider, req, func(delta string) {
		t.emit(Event{Kind: TextDelta, Text: delta})
	})
	t.usage.InputTokens += usage.InputTokens
	t.usage.OutputTokens += usage.OutputTokens
	if streamErr != nil {
		// Keep what was shown: the partial text stays in history, its
		// unfinished tool calls do not.
		reply = textOnly(reply)
	}
	if len(reply.Content) > 0 {
		if _, err := a.History.Append(ctx, t.sess.ID, reply); err != nil {
			return reply, stop, err
		}
	}
	return reply, stop, streamErr
}

// collect drains one provider stream into an assistant message.
func collect(ctx context.Context, p Provider, req Request, onText func(string)) (Message, StopReason, Usage, error) {
	reply := Message{Role: RoleAssistant}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			reply.Content = append(reply.Content, Block{Type: BlockText, Text: text.String()})
			text.Reset()
		}
	}
	var stop StopReason
	var usage Usage
	for ev := range p.Stream(ctx, req) {
		switch ev.Kind {
		case EventText:
			text.WriteString(ev.Text)
			onText(ev.Text)
		case EventToolCall:
			flush()
			reply.Content = append(reply.Content, ev.ToolCall)
		case EventUsage:
			usage = ev.Usage
		case EventStop:
			stop = ev.StopReason
		case EventError:
			flush()
			return reply, stop, usage, ev.Err
		}
	}
	flush()
	if err := ctx.Err(); err != nil {
		return reply, stop, usage, err
	}
	if stop == "" {
		return reply, stop, usage, errors.New("agent: the model's response ended without a stop reason")
	}
	return reply, stop, usage, nil
}

func textOnly(m Message) Message {
	out := Message{Role: m.Role}
	for _, b := range m.Content {
		if b.Type == BlockText {
			out.Content = append(out.Content, b)
		}
	}
	return out
}

// dispatch runs each tool call in order and persists all their results as
// one message. A cancel mid-tool returns at once; the caller rolls back.
func (a *Agent) dispatch(ctx context.Context, t *turn, calls []Block) error {
	results := Message{Role: RoleUser}
	for _, c := range calls {
		if c.Name == todoToolName {
			t.sinceTodo = -1
		}
		call := ToolCall{ID: c.ID, Name: c.Name, Input: c.Input, Session: t.sess, Emit: t.emit}
		t.emit(Event{Kind: ToolStarted, Tool: c.Name, ToolID: c.ID, Summary: a.describe(call)})
		res := a.Tools.Dispatch(ctx, call)
		if err := ctx.Err(); err != nil {
			return err
		}
		t.emit(Event{Kind: ToolFinished, Tool: c.Name, ToolID: c.ID, Summary: res.Summary, IsError: res.IsError, Runs: res.Runs})
		results.Content = append(results.Content, Block{Type: BlockToolResult, ToolUseID: c.ID, Content: res.Content, IsError: res.IsError})
		if res.compact {
			if _, err := a.History.Append(ctx, t.sess.ID, results); err != nil {
				return err
			}
			return a.compactNow(ctx, t)
		}
	}
	t.sinceTodo++
	_, err := a.History.Append(ctx, t.sess.ID, results)
	return err
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

// describe is the one-line status of a tool call, from the tool when it
// knows how to say it.
func (a *Agent) describe(call ToolCall) string {
	if t, ok := a.Tools.tools[call.Name]; ok {
		if d, ok := t.(interface{ Describe(ToolCall) string }); ok {
			return d.Describe(call)
		}
	}
	return "calling " + call.Name
}

func (a *Agent) fail(emit func(Event), err error) error {
	emit(Event{Kind: TurnError, Err: err})
	return err
}

func (a *Agent) system(sess SessionInfo) string {
	if a.System == nil {
		return ""
	}
	return a.System(sess)
}

func (a *Agent) maxSteps() int              { return orDefault(a.MaxSteps, 20) }
func (a *Agent) maxTokens() int             { return orDefault(a.MaxTokens, 4096) }
func (a *Agent) keep() int                  { return orDefault(a.KeepToolResults, 3) }
func (a *Agent) compactAt() int             { return orDefault(a.CompactAt, 100_000) }
func (a *Agent) remindAfter() int           { return orDefault(a.RemindAfter, 3) }
func (a *Agent) turnTimeout() time.Duration { return orDefault(a.TurnTimeout, 10*time.Minute) }

func orDefault[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
