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
	// ContextBudget is the estimated token count of a call above which
	// tool results the model has already read are shortened to their head
	// and tail, oldest first, in bulk (0: 50,000). A result is never
	// shortened in the call that delivers it.
	ContextBudget int
	// CompactAt is the estimated token count of the history above which
	// it is replaced by a model-written summary (0: 100,000).
	CompactAt int
	// RemindAfter is how many steps without a todo update bring a reminder
	// (default 3), when a todo tool is registered.
	RemindAfter int
	// Budget bounds the tokens of a turn and of a thread's day; Tokens
	// keeps the thread's daily count (optional: without it, ThreadDay
	// is not held).
	Budget TokenBudget
	Tokens TokenLedger
}

// ErrMaxSteps ends a turn that used all its steps.
var ErrMaxSteps = errors.New("agent: the turn reached its step limit")

// ErrDeadline ends a turn that ran out of time.
var ErrDeadline = errors.New("agent: the turn reached its time limit")

// interruptedCall is the result of a call a restart left unanswered once
// the person writes again.
const interruptedCall = "not finished: opsbot stopped or restarted while this call was under way, and the person has written " +
	"again since. If it was running a command, the command was stopped and may have partly run (the thread says which " +
	"commands were cut off); if it was waiting for an approval, nothing ran. It was not re-run: check the state before " +
	"doing it again."

// ErrShutdown is the cancel cause of a turn stopped because the process is
// shutting down (context.WithCancelCause). Unlike a person's Stop it
// leaves the calls under way unanswered and makes no last call: a tool
// call waiting for an approval then resumes after the restart, when the
// approval is decided.
var ErrShutdown = errors.New("agent: opsbot is shutting down")

// Turn runs one turn: the user's text, then as many steps as it takes. It
// reports through emit and returns when the turn ends. Cancelling ctx ends
// the turn (ErrStopped) and keeps what it did in the history: the calls
// under way say how far they got. When ctx comes from Stoppable, the turn
// first asks the model, briefly and with no tools, for what it found.
func (a *Agent) Turn(ctx context.Context, sess SessionInfo, text string, emit func(Event)) error {
	msgs, _, err := a.History.Load(ctx, sess.ID)
	if err != nil {
		return a.fail(emit, err)
	}
	if len(pendingToolCalls(msgs)) > 0 {
		// Calls a crash or a shutdown left unanswered: the new message
		// supersedes them, and both APIs refuse a call without a result.
		// Whether a call had started is not known here, so the model is
		// told both cases: a command cut off mid-run may have changed
		// something, and must not be taken for one that never ran.
		a.settle(ctx, &turn{sess: sess}, interruptedCall)
	}
	msgs, _, err = a.History.Load(ctx, sess.ID)
	if err != nil {
		return a.fail(emit, err)
	}
	if _, err := a.History.Append(ctx, sess.ID, userText(text)); err != nil {
		return a.fail(emit, err)
	}
	return a.run(ctx, sess, len(msgs), emit)
}

// Resume continues a session whose last message asked for tools that have
// no results yet, as a process that restarted mid-turn finds it: the tools
// are dispatched (an approval decided meanwhile is found by its gate) and
// the turn goes on. It does nothing when there is nothing to resume.
func (a *Agent) Resume(ctx context.Context, sess SessionInfo, emit func(Event)) (resumed bool, err error) {
	msgs, _, err := a.History.Load(ctx, sess.ID)
	if err != nil {
		return false, a.fail(emit, err)
	}
	if len(pendingToolCalls(msgs)) == 0 {
		return false, nil
	}
	return true, a.run(ctx, sess, turnStart(msgs), emit)
}

// turnStart is the index of the message that began the last turn: the
// last message holding the person's words.
func turnStart(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser && isPlainText(msgs[i]) {
			return i
		}
	}
	return 0
}

// turn is the state of one running turn.
type turn struct {
	sess SessionInfo
	emit func(Event)
	// start is the index in the history of the turn's first message (the
	// question): compaction summarizes only what came before it.
	start int
	// usage sums the turn's own calls; tokens is the count its budget
	// reads, shared with its subagents.
	usage     Usage
	tokens    *tokenCount
	sinceTodo int
	// spoke: text was shown in this turn; toolSince: a tool ran since.
	spoke, toolSince bool
	// compactFailedAt is the history's size when a summary was last
	// rejected in this turn (0: none): compact.go backs off from it.
	compactFailedAt int
}

func (a *Agent) run(parent context.Context, sess SessionInfo, start int, emit func(Event)) error {
	ctx, cancel := context.WithCancelCause(ownStop(withCardSlot(parent)))
	defer cancel(nil)
	b := newBudget(a.turnTimeout(), func() { cancel(ErrDeadline) })
	defer b.stop()
	ctx = withBudget(ctx, b)
	t := &turn{sess: sess, emit: emit, start: start}
	ctx, t.tokens = withTokenCount(ctx, func() int { return a.today(parent, sess) })
	err := a.steps(ctx, t)
	var over *BudgetError
	switch {
	case err == nil:
		emit(Event{Kind: TurnDone, Usage: t.usage})
		return nil
	case parent.Err() != nil && errors.Is(context.Cause(parent), ErrShutdown):
		emit(Event{Kind: TurnError, Err: ErrShutdown})
		return parent.Err()
	case parent.Err() != nil:
		return a.stopped(parent, t)
	case errors.As(err, &over):
		return a.outOfTokens(parent, t, over)
	case errors.Is(context.Cause(ctx), ErrDeadline):
		a.settle(context.WithoutCancel(parent), t, "not run: the turn reached its time limit")
		a.lastWords(parent, t, deadlineStep)
		return a.fail(emit, ErrDeadline)
	}
	return a.fail(emit, err)
}

// emptyAnswer is shown when the model ended a turn without a word.
const emptyAnswer = "(The model ended without an answer. Ask again, or rephrase the question.)"

// steps is the loop: call the model, run the tools it asks for, repeat.
// The last step may not call tools and is asked for a summary.
func (a *Agent) steps(ctx context.Context, t *turn) error {
	for step := 0; step < a.maxSteps(); step++ {
		last := step == a.maxSteps()-1
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
		if over := a.spent(t); over != nil {
			return over
		}
		if msgs, err = a.beforeCall(ctx, t, msgs); err != nil {
			return err
		}
		closing := ""
		if last {
			closing = lastStep
		}
		reply, stop, err := a.call(ctx, t, msgs, closing)
		if err != nil {
			return err
		}
		calls := pendingToolCalls([]Message{reply})
		if stop != StopToolUse || len(calls) == 0 {
			if stop == StopMaxTokens {
				t.emit(Event{Kind: Notice, Text: "the answer was cut at the model's output limit"})
			}
			if last {
				t.emit(Event{Kind: Notice, Text: fmt.Sprintf("the turn reached its step limit (%d model calls); ask me to go on", a.maxSteps())})
			}
			if !t.spoke {
				// Never an empty message in the thread.
				t.emit(Event{Kind: TextDelta, Text: emptyAnswer})
			}
			return nil
		}
		if last {
			break // the model called tools all the same
		}
		if over := a.spent(t); over != nil {
			return over // its calls do not run
		}
		if err := a.dispatch(ctx, t, calls); err != nil {
			return err
		}
	}
	// The model called tools on its last step, which may call none: it
	// gave no answer, so opsbot says what ran.
	a.settle(ctx, t, "not run: the turn reached its step limit")
	a.sayWhatRan(ctx, t)
	return fmt.Errorf("%w (%d model calls)", ErrMaxSteps, a.maxSteps())
}

// beforeCall injects what the agent must see before its next call (job
// notifications), compacts when the history grew too
// large, and returns the history to send.
func (a *Agent) beforeCall(ctx context.Context, t *turn, msgs []Message) ([]Message, error) {
	var inject []Block
	ids, notes, err := a.pendingNotices(ctx, t)
	if err != nil {
		return nil, err
	}
	inject = append(inject, notes...)
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
// closing, when set, is the note of a call that ends the turn: it is sent
// after the history, and the model may call no tool.
func (a *Agent) call(ctx context.Context, t *turn, msgs []Message, closing string) (Message, StopReason, error) {
	system, clock := splitClock(a.system(t.sess))
	last := closing != ""
	req := Request{Model: a.Model, System: system, CachePrefix: len(system), Messages: prepare(msgs, a.contextBudget()),
		Tools: a.Tools.Specs(), MaxTokens: a.maxTokens(), NoToolUse: last}
	if last {
		req.Messages = append(req.Messages, userText(closing))
		req.Messages = prepare(req.Messages, 0)
	}
	req.Messages, req.CacheMarks = withClock(req.Messages, clock) // context.go: a stable prefix
	ctx = WithRetryNotice(ctx, func(wait time.Duration, reason string) {
		t.emit(Event{Kind: Notice, Text: retryText(wait, reason)})
	})
	first := true
	reply, stop, usage, streamErr := collect(ctx, a.Provider, req, func(delta string) {
		if first && strings.TrimSpace(delta) == "" {
			return // blanks before the first word: an answer of blanks alone is no answer
		}
		if first && t.spoke && t.toolSince {
			// A new paragraph after a tool call, or the answer reads
			// "Let me check the disks.Disk usage on…".
			t.emit(Event{Kind: TextDelta, Text: "\n\n"})
			t.toolSince = false
		}
		first, t.spoke = false, true
		t.emit(Event{Kind: TextDelta, Text: delta})
	})
	a.count(ctx, t, usage)
	if streamErr != nil {
		// Keep what was shown: the partial text stays in history, its
		// unfinished tool calls do not.
		reply = textOnly(reply)
	}
	if len(reply.Content) > 0 {
		// Kept even when the turn was just stopped: it was shown.
		if _, err := a.History.Append(context.WithoutCancel(ctx), t.sess.ID, reply); err != nil {
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
		// Whitespace alone is not stored: Anthropic refuses a blank text
		// block, and the thread would break for good.
		if strings.TrimSpace(text.String()) != "" {
			reply.Content = append(reply.Content, Block{Type: BlockText, Text: text.String()})
		}
		text.Reset()
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

// limit is the longest call may run, when its tool says.
func (a *Agent) limit(call ToolCall) time.Duration {
	if t, ok := a.Tools.tools[call.Name]; ok {
		if l, ok := t.(interface{ Limit(ToolCall) time.Duration }); ok {
			return l.Limit(call)
		}
	}
	return 0
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
func (a *Agent) contextBudget() int         { return orDefault(a.ContextBudget, 50_000) }
func (a *Agent) compactAt() int             { return orDefault(a.CompactAt, 100_000) }
func (a *Agent) remindAfter() int           { return orDefault(a.RemindAfter, 3) }
func (a *Agent) turnTimeout() time.Duration { return orDefault(a.TurnTimeout, 10*time.Minute) }

func orDefault[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
