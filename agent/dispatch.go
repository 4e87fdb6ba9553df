package agent

import (
	"context"
	"errors"
	"strings"
)

// keepChanges leaves, in a rolled-back turn's place, a short record of the
// commands that changed something before the stop: forgetting them, the
// model might run them again.
func (a *Agent) keepChanges(ctx context.Context, t *turn) error {
	if len(t.changed) == 0 {
		return nil
	}
	note := "[opsbot note, not the person's words] The person stopped the previous turn and it was undone, " +
		"but these approved commands had already run and their effects stay:\n- " + strings.Join(t.changed, "\n- ")
	_, err := a.History.Append(ctx, t.sess.ID, userText(note))
	return err
}

// lastStep is what the last step of a turn is told: it may not call
// tools, so that a turn always ends with an answer.
const lastStep = "[opsbot note, not the person's words] This is the last step of this turn: the step limit is reached and no " +
	"more tools can run. Answer now: summarize what you found, quoting the evidence, and what is left to check."

// dispatch runs each tool call in order and persists all their results as
// one message. A person's Stop returns at once (the caller rolls back);
// the time limit records exactly what happened to each call first.
func (a *Agent) dispatch(ctx context.Context, t *turn, calls []Block) error {
	results := Message{Role: RoleUser}
	compact := false
	for i, c := range calls {
		if a.Tools.plans(c.Name) {
			t.sinceTodo = -1
		}
		call := ToolCall{ID: c.ID, Name: c.Name, Input: c.Input, Session: t.sess, Emit: t.emit}
		t.emit(Event{Kind: ToolStarted, Tool: c.Name, ToolID: c.ID, Summary: a.describe(call)})
		res := a.dispatchOne(ctx, call, c)
		t.noteChanges(res.Runs)
		if err := ctx.Err(); err != nil {
			if errors.Is(context.Cause(ctx), ErrDeadline) {
				a.interrupted(context.WithoutCancel(ctx), t, results, c, res, calls[i+1:])
			}
			return err
		}
		t.emit(Event{Kind: ToolFinished, Tool: c.Name, ToolID: c.ID, Summary: res.Summary, IsError: res.IsError, Runs: res.Runs})
		results.Content = append(results.Content, Block{Type: BlockToolResult, ToolUseID: c.ID, Content: res.Content, IsError: res.IsError})
		compact = compact || res.compact
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

// dispatchOne runs one call, unless its arguments could not be read: the
// model is then told why, and calls again (the step limit bounds it).
func (a *Agent) dispatchOne(ctx context.Context, call ToolCall, c Block) ToolResult {
	if c.InputError != "" {
		return Errorf("your arguments for %s were not valid JSON (%s); nothing ran. Call %s again with a JSON object that matches its schema.",
			c.Name, c.InputError, c.Name)
	}
	return a.Tools.Dispatch(ctx, call)
}

// noteChanges remembers the approved commands a tool ran, for keepChanges.
func (t *turn) noteChanges(runs []CommandRun) {
	for _, r := range runs {
		if r.Approved {
			t.changed = append(t.changed, r.ranBefore("the stop"))
		}
	}
}

// interrupted records the results of a dispatch the time limit cut: the
// calls that finished keep their results, the one running says it was cut
// (with what it printed), the ones after say they never started.
func (a *Agent) interrupted(ctx context.Context, t *turn, results Message, cur Block, res ToolResult, rest []Block) {
	t.emit(Event{Kind: ToolFinished, Tool: cur.Name, ToolID: cur.ID, Summary: "interrupted by the time limit", IsError: true, Runs: res.Runs})
	content := "interrupted: the turn reached its time limit while this was running, so it may have partly run"
	if res.Content != "" {
		content += "; what it reported:\n" + res.Content
	}
	results.Content = append(results.Content, Block{Type: BlockToolResult, ToolUseID: cur.ID, Content: content, IsError: true})
	for _, c := range rest {
		results.Content = append(results.Content, Block{Type: BlockToolResult, ToolUseID: c.ID,
			Content: "not run: the turn reached its time limit before this call started", IsError: true})
	}
	a.History.Append(ctx, t.sess.ID, results)
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
