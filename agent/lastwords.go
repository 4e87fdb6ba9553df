package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// deadlineStep is the note of the call a turn makes when its time is up.
const deadlineStep = "[opsbot note, not the person's words] This turn has reached its time limit and no more tools can run. " +
	"Answer now: summarize what you found, quoting the evidence, and what is left to check."

// lastWordsTime bounds the call that answers after the time limit: the
// turn is over, so it is short and does not count against the turn.
const lastWordsTime = time.Minute

// lastWords gives a turn that ran out of time or tokens an answer: one
// more call, with no tools, asks the model to summarize what it found. A
// person's Stop (parent's end) ends that call at once.
func (a *Agent) lastWords(parent context.Context, t *turn, closing string) {
	ctx, cancel := context.WithTimeout(parent, lastWordsTime)
	defer cancel()
	a.finalWords(ctx, t, closing)
}

// finalWords makes a turn's last call, under ctx, with no tools: closing
// says why the turn ends. If the model fails, is cut off by ctx's end, or
// calls a tool all the same, opsbot says what ran instead.
func (a *Agent) finalWords(ctx context.Context, t *turn, closing string) {
	keep := context.WithoutCancel(ctx)
	msgs, _, err := a.History.Load(keep, t.sess.ID)
	if err != nil {
		return
	}
	reply, _, err := a.call(ctx, t, msgs, closing)
	if err == nil && hasText(reply) && len(pendingToolCalls([]Message{reply})) == 0 {
		return
	}
	a.settle(keep, t, "not run: the turn had ended")
	a.sayWhatRan(keep, t)
}

// sayWhatRan ends a turn the model could not answer with what its tools
// did, in opsbot's words: each call and the first line of its result.
func (a *Agent) sayWhatRan(ctx context.Context, t *turn) {
	msgs, _, err := a.History.Load(ctx, t.sess.ID)
	if err != nil {
		return
	}
	if t.start < len(msgs) {
		msgs = msgs[t.start:]
	}
	text := whatRan(msgs)
	if t.spoke {
		text = "\n\n" + text
	}
	t.spoke = true
	t.emit(Event{Kind: TextDelta, Text: text})
}

// hasText reports whether m says something.
func hasText(m Message) bool {
	for _, b := range m.Content {
		if b.Type == BlockText && strings.TrimSpace(b.Text) != "" {
			return true
		}
	}
	return false
}

// whatRan words the tool calls of msgs and how each ended.
func whatRan(msgs []Message) string {
	results := map[string]Block{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == BlockToolResult {
				results[b.ToolUseID] = b
			}
		}
	}
	var lines []string
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type != BlockToolUse {
				continue
			}
			lines = append(lines, fmt.Sprintf("- `%s %s`: %s", b.Name, clip(string(b.Input), 120), clip(firstLine(results[b.ID].Content), 200)))
		}
	}
	if len(lines) == 0 {
		return "The model gave no answer, and nothing ran."
	}
	return "The model gave no answer; this is what ran:\n" + strings.Join(lines, "\n")
}

// firstLine is the first line of s that is not blank, or "no result".
func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return "no result"
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
