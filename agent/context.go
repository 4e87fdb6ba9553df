package agent

import (
	"encoding/json"
	"fmt"
	"sort"

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

// bigResult is the size from which a result is shortened in the first
// pass: big outputs go before small ones.
const bigResult = 4096

// neverShortened are tools whose results the model keeps following: a
// loaded runbook, its own plan (agent/tools' load_skill and todo).
var neverShortened = map[string]bool{"load_skill": true, "todo": true}

// prepare builds the messages of a model call from the history: the
// history is repaired so that the API accepts it (repair), and, when the
// estimate is over budget, tool results the model has already read are
// shortened to their head and tail, oldest and biggest first. A result
// the model has not yet seen — one this request delivers — is never
// shortened. Consecutive messages of one role are merged, as both APIs want
// roles to alternate. The history itself is not changed.
func prepare(history []Message, budget int) []Message {
	msgs := repair(history)
	shorten(msgs, budget)
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, m.Content...)
			continue
		}
		out = append(out, m)
	}
	return out
}

// candidate is a tool result that may be shortened.
type candidate struct{ msg, block, size int }

// shorten cuts read tool results in msgs (copies of the history's) until
// the estimate fits budget or nothing is left to cut.
func shorten(msgs []Message, budget int) {
	over := estimateAll(msgs) - budget
	if budget <= 0 || over <= 0 {
		return
	}
	names := map[string]string{}
	lastAssistant := -1
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
	var big, small []candidate
	for i := 0; i < lastAssistant; i++ {
		for j, b := range msgs[i].Content {
			if b.Type != BlockToolResult || neverShortened[names[b.ToolUseID]] || len(b.Content) <= 3*keptEnds {
				continue
			}
			c := candidate{i, j, len(b.Content)}
			if c.size >= bigResult {
				big = append(big, c)
			} else {
				small = append(small, c)
			}
		}
	}
	// Oldest first within each pass; the biggest of one message first.
	for _, pass := range [][]candidate{big, small} {
		sort.SliceStable(pass, func(x, y int) bool {
			if pass[x].msg != pass[y].msg {
				return pass[x].msg < pass[y].msg
			}
			return pass[x].size > pass[y].size
		})
		for _, c := range pass {
			if over <= 0 {
				return
			}
			over -= cut(&msgs[c.msg], c.block, names)
		}
	}
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
