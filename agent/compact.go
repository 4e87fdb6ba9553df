package agent

import (
	"context"
	"errors"
	"fmt"
)

const summaryPrompt = `Summarize this conversation so that you can continue it without the transcript.
Keep: the user's goal and open questions; hosts, services and paths involved; commands run with
their essential results (numbers, errors); decisions and approvals; what remains to do.
Be concise and factual; write it as notes to yourself.`

const summaryHeader = "[Summary of the conversation so far, written when its context was compacted. The full transcript is archived.]\n\n"

// compactNow replaces what came before the current turn with a
// model-written summary; the full transcript is archived by the History.
// The current turn — its question, calls and results, read or not — is kept
// as it is. After it, a cancel of this turn rolls back only to the summary.
func (a *Agent) compactNow(ctx context.Context, t *turn) error {
	msgs, _, err := a.History.Load(ctx, t.sess.ID)
	if err != nil {
		return err
	}
	start := min(t.start, len(msgs))
	if start <= 1 {
		return nil // nothing before this turn, or only a summary already
	}
	keep := msgs[start:]
	msgs = msgs[:start]
	// The tool definitions go with the request: gateways (Bedrock) refuse
	// tool blocks in a request that defines no tools.
	req := Request{Model: a.Model, System: summaryPrompt, MaxTokens: a.maxTokens(), Tools: a.Tools.Specs(),
		Messages: prepare(append(append([]Message(nil), msgs...), userText("Write the summary now.")), a.contextBudget())}
	reply, _, usage, err := collect(ctx, a.Provider, req, func(string) {})
	t.usage.InputTokens += usage.InputTokens
	t.usage.OutputTokens += usage.OutputTokens
	if err != nil {
		return fmt.Errorf("agent: compact: %w", err)
	}
	summary := textOf(reply)
	if summary == "" {
		return errors.New("agent: compact: the model wrote an empty summary")
	}
	last, err := a.History.Compact(ctx, t.sess.ID, append([]Message{userText(summaryHeader + summary)}, keep...)...)
	if err != nil {
		return err
	}
	t.rollback = last - int64(len(keep))
	t.start = 1
	t.emit(Event{Kind: Notice, Text: fmt.Sprintf("context compacted: %d messages summarized", len(msgs))})
	return nil
}

func isPlainText(m Message) bool {
	for _, b := range m.Content {
		if b.Type != BlockText {
			return false
		}
	}
	return len(m.Content) > 0
}

// compactTool lets the model ask for a compaction itself.
type compactTool struct{}

// NewCompactTool returns the `compact` tool.
func NewCompactTool() Tool { return compactTool{} }

func (compactTool) Spec() ToolSpec {
	return ToolSpec{Name: "compact", Description: "Summarize the conversation so far and continue from the summary, to free context. Use when the conversation has grown long and old details no longer matter.",
		InputSchema: schema(`{"type":"object","properties":{}}`)}
}

func (compactTool) Call(context.Context, ToolCall) ToolResult {
	return ToolResult{Content: "compacting", Summary: "compacting the conversation", compact: true}
}
