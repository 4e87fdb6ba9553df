package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

const summaryPrompt = `Summarize this conversation so that you can continue it without the transcript.
Keep: the user's goal and open questions; hosts, services and paths involved; commands run with
their essential results (numbers, errors); decisions and approvals; what remains to do.
Be concise and factual; write it as notes to yourself. You cannot run tools now: write the
summary from the transcript alone.`

const summaryHeader = "[Summary of the conversation so far, written when its context was compacted. The full transcript is archived.]\n\n"

// A summary is rejected, and the history kept as it was, when the model
// called a tool instead of writing it, wrote nothing, or wrote far less
// than the facts it would replace: fewer than minSummaryChars characters
// and less than 1/summaryRatio of the text (words, tool inputs and
// results) of the messages it summarizes. "I'll check first." replacing a
// 40 KB investigation fails both; a 150-character summary of a
// 2 KB exchange passes the ratio.
const (
	minSummaryChars = 200
	summaryRatio    = 20
)

// compactNow replaces what came before the current turn with a
// model-written summary; the full transcript is archived by the History.
// The current turn — its question, calls and results, read or not — is kept
// as it is. After it, a cancel of this turn rolls back only to the summary.
// A summary that fails (see minSummaryChars) keeps the history whole, and
// the turn goes on.
func (a *Agent) compactNow(ctx context.Context, t *turn) error {
	msgs, _, err := a.History.Load(ctx, t.sess.ID)
	if err != nil {
		return err
	}
	start := min(t.start, len(msgs))
	if start <= 1 {
		return nil // nothing before this turn, or only a summary already
	}
	est := estimateAll(msgs)
	if t.compactFailedAt > 0 && est <= t.compactFailedAt+a.compactAt()/4 {
		return nil // backing off: see compactFailedAt
	}
	keep := msgs[start:]
	old := msgs[:start]
	summary, err := a.summarize(ctx, t, old)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		// The next attempt of this turn waits until the history has grown
		// by a quarter of compactAt, so that a model that will not
		// summarize is not asked again on every step.
		t.compactFailedAt = est
		t.emit(Event{Kind: Notice, Text: "context not compacted: " + err.Error() + "; the conversation is kept whole"})
		return nil
	}
	if _, err := a.History.Compact(ctx, t.sess.ID, append([]Message{userText(summaryHeader + summary)}, keep...)...); err != nil {
		return err
	}
	t.start = 1
	t.emit(Event{Kind: Notice, Text: fmt.Sprintf("context compacted: %d messages summarized", len(old))})
	return nil
}

// summarize asks the model for a summary of old and checks it. The
// request offers no tools and holds no tool blocks: the transcript goes as
// text in one user message, so no API or gateway can refuse it for tool
// blocks without tools, and a model cannot answer it with a call.
func (a *Agent) summarize(ctx context.Context, t *turn, old []Message) (string, error) {
	transcript := transcriptText(prepare(old, a.contextBudget()))
	req := Request{Model: a.Model, System: summaryPrompt, MaxTokens: a.maxTokens(),
		Messages: []Message{userText("<transcript>\n" + transcript + "</transcript>\n\nWrite the summary now.")}}
	reply, _, usage, err := collect(ctx, a.Provider, req, func(string) {})
	a.count(ctx, t, usage)
	if err != nil {
		return "", errors.New("the summary request failed")
	}
	return checkSummary(reply, factSize(old))
}

// checkSummary returns the summary in reply, or why it is refused.
func checkSummary(reply Message, replaced int) (string, error) {
	if len(pendingToolCalls([]Message{reply})) > 0 {
		return "", errors.New("the model called a tool instead of writing a summary")
	}
	summary := strings.TrimSpace(textOf(reply))
	switch {
	case summary == "":
		return "", errors.New("the model wrote an empty summary")
	case len(summary) < minSummaryChars && len(summary)*summaryRatio < replaced:
		return "", fmt.Errorf("the model's summary (%d characters) was far shorter than what it would replace (%d)", len(summary), replaced)
	}
	return summary, nil
}

// factSize is the size of what msgs say: their text, tool inputs and
// results.
func factSize(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Input) + len(b.Content)
		}
	}
	return n
}

// transcriptText renders messages as plain text for the summary request.
func transcriptText(msgs []Message) string {
	var b strings.Builder
	names := map[string]string{}
	for _, m := range msgs {
		for _, bl := range m.Content {
			switch {
			case bl.Type == BlockText && m.Role == RoleUser:
				fmt.Fprintf(&b, "[person or opsbot note]\n%s\n\n", bl.Text)
			case bl.Type == BlockText:
				fmt.Fprintf(&b, "[you]\n%s\n\n", bl.Text)
			case bl.Type == BlockToolUse:
				names[bl.ID] = bl.Name
				fmt.Fprintf(&b, "[you called %s] %s\n\n", bl.Name, bl.Input)
			case bl.Type == BlockToolResult:
				fmt.Fprintf(&b, "[result of %s]%s\n%s\n\n", names[bl.ToolUseID], errorMark(bl.IsError), bl.Content)
			}
		}
	}
	return b.String()
}

func errorMark(isError bool) string {
	if isError {
		return " (failed)"
	}
	return ""
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
