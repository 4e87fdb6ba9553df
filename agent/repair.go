package agent

import "strings"

// notAnswered is the result given to a tool call that the history holds no
// result for.
const notAnswered = "not run: no result was recorded for this call"

// repair returns a copy of the history that both APIs accept, whatever the
// model sent or a crash left behind. Each rule is one the APIs enforce with
// a 400 that would otherwise repeat on every later turn:
//   - a text block must hold more than whitespace (Anthropic);
//   - a message must have content (both);
//   - the first message is the user's (Anthropic);
//   - every tool call is answered by a result in the very next message,
//     results first (both), and no result answers a call that is not
//     there (both).
func repair(history []Message) []Message {
	out := make([]Message, 0, len(history)+1)
	for _, m := range history {
		blocks := make([]Block, 0, len(m.Content))
		for _, b := range m.Content {
			if b.Type == BlockText && strings.TrimSpace(b.Text) == "" {
				continue
			}
			blocks = append(blocks, b)
		}
		if len(blocks) > 0 {
			out = append(out, Message{Role: m.Role, Content: blocks})
		}
	}
	if len(out) > 0 && out[0].Role != RoleUser {
		out = append([]Message{userText("[the conversation continues]")}, out...)
	}
	return answerCalls(out)
}

// answerCalls makes each assistant message's calls answered by the next
// message and drops results that answer nothing.
func answerCalls(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	var open []Block // the calls of the previous assistant message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == RoleAssistant {
			if len(open) > 0 {
				out = append(out, Message{Role: RoleUser, Content: results(open, nil)})
			}
			out = append(out, m)
			open = calls(m)
			continue
		}
		m.Content = results(open, m.Content)
		open = nil
		if len(m.Content) > 0 {
			out = append(out, m)
		}
	}
	if len(open) > 0 && len(out) > 0 {
		// A history ending in calls is resumed by dispatching them; it is
		// never sent as is, but if it is, it must be valid.
		out = append(out, Message{Role: RoleUser, Content: results(open, nil)})
	}
	return out
}

// results orders a user message's blocks: one result per open call, in
// the calls' order (the recorded one, or a "not run"), then its other
// blocks; results for calls not open are dropped.
func results(open, blocks []Block) []Block {
	byID := map[string]Block{}
	var rest []Block
	for _, b := range blocks {
		if b.Type == BlockToolResult {
			byID[b.ToolUseID] = b
			continue
		}
		rest = append(rest, b)
	}
	out := make([]Block, 0, len(open)+len(rest))
	for _, c := range open {
		r, ok := byID[c.ID]
		if !ok {
			r = Block{Type: BlockToolResult, ToolUseID: c.ID, Content: notAnswered, IsError: true}
		}
		out = append(out, r)
	}
	return append(out, rest...)
}

func calls(m Message) []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}
