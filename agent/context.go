package agent

import (
	"encoding/json"
	"fmt"

	"github.com/opsbot/opsbot/agent/internal/textcut"
)

// EstimateTokens guesses a message's token count from its JSON size: about
// four bytes a token for English and shell output. Good enough to decide
// when to shorten or compact; never used for billing.
func EstimateTokens(m Message) int {
	b, _ := json.Marshal(m.Content)
	return len(b)/4 + 4
}

func estimateAll(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += EstimateTokens(m)
	}
	return n
}

// keptEnds is how much of a shortened tool result stays, at its head and
// at its tail: the column headers and the last error.
const keptEnds = 400

// neverShortened are tools whose results the model keeps following: a
// loaded runbook, its own plan (agent/tools' load_skill and todo).
var neverShortened = map[string]bool{"load_skill": true, "todo": true}

// prepare builds the messages of a model call from the history: the
// history is repaired so that the API accepts it (repair), and, when the
// estimate is over budget, tool results the model has already read are
// shortened to their head and tail, oldest first (shorten). A result the
// model has not yet seen — one this request delivers — is never
// shortened. Consecutive messages of one role are merged, as both APIs want
// roles to alternate. The history itself is not changed.
func prepare(history []Message, budget int) []Message {
	msgs := repair(history)
	shorten(msgs, budget)
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content[:len(out[n-1].Content):len(out[n-1].Content)], m.Content...)
			continue
		}
		out = append(out, m)
	}
	return out
}

// shorten cuts read tool results in msgs (copies of the history's) in
// bulk, oldest first. Cutting as little as fits, one result per step,
// would rewrite an old message at every step and break the prefix a
// provider caches. Instead, once the estimate passes budget, it saves a
// whole number of halves of the budget — the fewest that bring the
// request under budget, so to between half the budget and the budget.
// Which results are cut depends only on that number and on the history,
// which only grows: the same ones stay cut, and the prefix stays the same,
// until the history has grown by another half of the budget.
func shorten(msgs []Message, budget int) {
	total := estimateAll(msgs)
	if budget <= 0 || total <= budget {
		return
	}
	half := max(budget/2, 1)
	target := (total - budget + half - 1) / half * half
	names, lastAssistant := callNames(msgs)
	saved := 0
	for i := 0; i < lastAssistant; i++ {
		for j, b := range msgs[i].Content {
			if saved >= target {
				return
			}
			if b.Type == BlockToolResult && !neverShortened[names[b.ToolUseID]] && len(b.Content) > 3*keptEnds {
				saved += cut(&msgs[i], j, names)
			}
		}
	}
}

// callNames maps the tool call ids of msgs to their tools' names, and
// finds the last assistant message: the results after it are unread.
func callNames(msgs []Message) (names map[string]string, lastAssistant int) {
	names, lastAssistant = map[string]string{}, -1
	for i, m := range msgs {
		for _, b := range m.Content {
			if b.Type == BlockToolUse {
				names[b.ID] = b.Name
			}
		}
		if m.Role == RoleAssistant {
			lastAssistant = i
		}
	}
	return names, lastAssistant
}

// withClock adds the clock note (splitClock) to the last message of a
// prepared request, a user message, and returns the cache marks: the last
// block before the note, and the last block of the user message before,
// where the previous call put its mark. Everything up to that one is what
// the previous call sent, byte for byte, unless a bulk cut (shorten)
// happened in between.
func withClock(msgs []Message, clock string) ([]Message, []BlockRef) {
	last := len(msgs) - 1
	if last < 0 || msgs[last].Role != RoleUser {
		return msgs, nil
	}
	var marks []BlockRef
	for i := last - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser && len(msgs[i].Content) > 0 {
			marks = append(marks, BlockRef{i, len(msgs[i].Content) - 1})
			break
		}
	}
	if n := len(msgs[last].Content); n > 0 {
		marks = append(marks, BlockRef{last, n - 1})
	}
	if clock != "" {
		msgs = append([]Message(nil), msgs...)
		content := msgs[last].Content
		msgs[last].Content = append(content[:len(content):len(content)], Block{Type: BlockText, Text: clock})
	}
	return msgs, marks
}

// cut shortens one result to its head and tail and returns about how many
// tokens that saved.
func cut(m *Message, i int, names map[string]string) int {
	blocks := append([]Block(nil), m.Content...)
	b := blocks[i]
	s := b.Content
	head, tail := textcut.Head(s, keptEnds), textcut.Tail(s, keptEnds)
	b.Content = fmt.Sprintf("%s\n[… %d bytes of this %s output cleared to save context; you read them in full earlier …]\n%s",
		head, len(s)-len(head)-len(tail), names[b.ToolUseID], tail)
	blocks[i] = b
	m.Content = blocks
	return (len(s) - len(b.Content)) / 4
}

// pendingToolCalls returns the tool calls of the last message when it is
// an assistant message whose calls have no results yet: a turn interrupted
// between asking for tools and recording their results.
func pendingToolCalls(history []Message) []Block {
	if len(history) == 0 {
		return nil
	}
	last := history[len(history)-1]
	if last.Role != RoleAssistant {
		return nil
	}
	var calls []Block
	for _, b := range last.Content {
		if b.Type == BlockToolUse {
			calls = append(calls, b)
		}
	}
	return calls
}

// textOf joins the text blocks of a message.
func textOf(m Message) string {
	s := ""
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

func userText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: text}}}
}
