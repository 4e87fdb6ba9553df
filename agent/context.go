package agent

import (
	"encoding/json"
	"fmt"
)

// estimateTokens guesses a message's token count from its JSON size: about
// four bytes a token for English and shell output. Good enough to decide
// when to compact; never used for billing.
func estimateTokens(m Message) int {
	b, _ := json.Marshal(m.Content)
	return len(b)/4 + 4
}

func estimateAll(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += estimateTokens(m)
	}
	return n
}

// prepare builds the messages of a model call from the history: old tool
// results become placeholders naming their tool (the last keep stay whole),
// and consecutive messages of one role are merged, as both APIs want roles
// to alternate. The history itself is not changed.
func prepare(history []Message, keep int) []Message {
	names := map[string]string{}
	results := 0
	for _, m := range history {
		for _, b := range m.Content {
			switch b.Type {
			case BlockToolUse:
				names[b.ID] = b.Name
			case BlockToolResult:
				results++
			}
		}
	}
	clear := results - keep
	out := make([]Message, 0, len(history))
	for _, m := range history {
		blocks := make([]Block, 0, len(m.Content))
		for _, b := range m.Content {
			if b.Type == BlockToolResult && clear > 0 {
				clear--
				b.Content = fmt.Sprintf("[earlier output of %s cleared to save context]", names[b.ToolUseID])
			}
			blocks = append(blocks, b)
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, Message{Role: m.Role, Content: blocks})
	}
	return out
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
