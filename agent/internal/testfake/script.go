package testfake

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Turn is one scripted model response in neutral terms, rendered into
// either wire format by AnthropicSSE or OpenAISSE.
type Turn struct {
	// Text is the answer's text, streamed as one delta per element,
	// before any tool call.
	Text []string
	// Calls are the tool calls, in order.
	Calls []Call
	// Stop is the stop reason in Anthropic's words (end_turn, tool_use,
	// max_tokens); empty means tool_use when there are calls, else end_turn.
	Stop string
	// Input is the prompt's tokens the usage reports (0: 100), Cached the
	// part of them read from the cache; the output is always 10 tokens.
	Input, Cached int
}

// input is the prompt's token count the usage reports.
func (t Turn) input() int {
	if t.Input == 0 {
		return 100
	}
	return t.Input
}

// Call is one scripted tool call. Args is the raw argument text as the
// model sends it: it need not be valid JSON.
type Call struct {
	ID, Name, Args string
}

// Say is a turn that answers with text.
func Say(pieces ...string) Turn { return Turn{Text: pieces} }

// Use is a turn with optional text and tool calls given as name, args
// pairs; call ids are id_0, id_1, … prefixed with idPrefix.
func Use(idPrefix, text string, nameArgs ...string) Turn {
	t := Turn{}
	if text != "" {
		t.Text = []string{text}
	}
	for i := 0; i+1 < len(nameArgs); i += 2 {
		t.Calls = append(t.Calls, Call{ID: fmt.Sprintf("%s_%d", idPrefix, i/2), Name: nameArgs[i], Args: nameArgs[i+1]})
	}
	return t
}

func (t Turn) stop() string {
	switch {
	case t.Stop != "":
		return t.Stop
	case len(t.Calls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func sseEvent(b *strings.Builder, name string, v any) {
	data, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(b, "event: %s\n", name)
	}
	fmt.Fprintf(b, "data: %s\n\n", data)
}

type obj = map[string]any

// AnthropicSSE renders t as a Messages API event stream.
func AnthropicSSE(t Turn) []byte {
	var b strings.Builder
	sseEvent(&b, "message_start", obj{"type": "message_start", "message": obj{"id": "msg_script", "type": "message", "role": "assistant",
		"content": []any{}, "model": "claude-test-1", "usage": obj{"input_tokens": t.input() - t.Cached, "cache_read_input_tokens": t.Cached, "output_tokens": 1}}})
	idx := 0
	if len(t.Text) > 0 {
		sseEvent(&b, "content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "text", "text": ""}})
		for _, p := range t.Text {
			sseEvent(&b, "content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "text_delta", "text": p}})
		}
		sseEvent(&b, "content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range t.Calls {
		sseEvent(&b, "content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
		sseEvent(&b, "content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "input_json_delta", "partial_json": c.Args}})
		sseEvent(&b, "content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	sseEvent(&b, "message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": t.stop()}, "usage": obj{"output_tokens": 10}})
	sseEvent(&b, "message_stop", obj{"type": "message_stop"})
	return []byte(b.String())
}

// OpenAISSE renders t as a chat completions chunk stream.
func OpenAISSE(t Turn) []byte {
	var b strings.Builder
	chunk := func(delta obj, finish any) {
		sseEvent(&b, "", obj{"id": "chatcmpl-script", "object": "chat.completion.chunk", "model": "gpt-test-1",
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(obj{"role": "assistant", "content": ""}, nil)
	for _, p := range t.Text {
		chunk(obj{"content": p}, nil)
	}
	for i, c := range t.Calls {
		chunk(obj{"tool_calls": []any{obj{"index": i, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}}}, nil)
		chunk(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": c.Args}}}}, nil)
	}
	finish := map[string]string{"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}[t.stop()]
	chunk(obj{}, finish)
	sseEvent(&b, "", obj{"id": "chatcmpl-script", "object": "chat.completion.chunk", "model": "gpt-test-1", "choices": []any{},
		"usage": obj{"prompt_tokens": t.input(), "completion_tokens": 10, "total_tokens": t.input() + 10,
			"prompt_tokens_details": obj{"cached_tokens": t.Cached}}})
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}
