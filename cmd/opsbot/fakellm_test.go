package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeLLM is an OpenAI-compatible chat completions endpoint that streams
// like the real one (data: chunks, then data: [DONE]) and plays a model
// whose moves the test sets: for a question containing a key, call
// run_command with the mapped command on local; after a tool result,
// answer with the result's first line; otherwise answer with the text of
// "say" in pieces, each when the test sends on next (at once when next is
// nil).
type fakeLLM struct {
	t        *testing.T
	key      string            // the API key it expects (default test-key)
	commands map[string]string // question keyword → command to run
	say      []string
	next     chan struct{}
	// respond, when set, plays the model instead: for each request, a
	// command to call run_command with on local, or else the answer text.
	respond func(fakeLLMRequest) (command, text string)
	// usage, when set, ends each response with a usage chunk (as the real
	// endpoint does for stream_options.include_usage): 100 tokens in, 10
	// out.
	usage bool

	mu       sync.Mutex
	requests []fakeLLMRequest
}

type fakeLLMRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (f *fakeLLM) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (f *fakeLLM) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+f.apiKey() {
		http.Error(w, `{"error":{"message":"bad path or key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
		return
	}
	var req fakeLLMRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	if f.respond != nil {
		if cmd, text := f.respond(req); cmd != "" {
			f.toolCall(w, cmd)
		} else {
			f.text(w, []string{text})
		}
		return
	}
	role, text := req.last()
	switch {
	case role == "tool":
		f.text(w, []string{"The command said: ", firstOutputLine(text)})
		return
	}
	for key, cmd := range f.commands {
		if strings.Contains(text, key) {
			f.toolCall(w, cmd)
			return
		}
	}
	f.text(w, f.say)
}

func (f *fakeLLM) chunk(w http.ResponseWriter, delta map[string]any, finish any) {
	c := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	b, _ := json.Marshal(c)
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

func (f *fakeLLM) text(w http.ResponseWriter, pieces []string) {
	f.chunk(w, map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range pieces {
		if f.next != nil {
			<-f.next
		}
		f.chunk(w, map[string]any{"content": p}, nil)
	}
	f.chunk(w, map[string]any{}, "stop")
	f.sendUsage(w)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// sendUsage writes the usage chunk when f.usage is set: no choices, the
// counts of the whole response.
func (f *fakeLLM) sendUsage(w http.ResponseWriter) {
	if !f.usage {
		return
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

// toolCall streams a run_command call whose arguments arrive in pieces.
func (f *fakeLLM) toolCall(w http.ResponseWriter, command string) {
	args, _ := json.Marshal(map[string]string{"target": "local", "command": command})
	f.chunk(w, map[string]any{"role": "assistant", "content": "Let me check. "}, nil)
	half := len(args) / 2
	f.mu.Lock()
	id := fmt.Sprintf("call_%d", len(f.requests))
	f.mu.Unlock()
	f.chunk(w, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function",
		"function": map[string]any{"name": "run_command", "arguments": string(args[:half])}}}}, nil)
	f.chunk(w, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": string(args[half:])}}}}, nil)
	f.chunk(w, map[string]any{}, "tool_calls")
	f.sendUsage(w)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// last is the role and text of the request's last message, the agent's
// dated note aside: after tool results it sends the time as a user
// message of its own ("[opsbot note, not the person's words] Time: …").
func (r fakeLLMRequest) last() (role, text string) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		text = fmt.Sprint(m.Content)
		if i == 0 || m.Role != "user" || !strings.HasPrefix(text, "[opsbot note, not the person's words] Time:") {
			return m.Role, text
		}
	}
	return "", ""
}

// toolResults returns what the model was told by tools, in order.
func (f *fakeLLM) toolResults() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if role, text := r.last(); role == "tool" {
			out = append(out, text)
		}
	}
	return out
}

// allRequests returns every request the model was sent, as it decoded them.
func (f *fakeLLM) allRequests() []fakeLLMRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeLLMRequest(nil), f.requests...)
}

func (f *fakeLLM) apiKey() string {
	if f.key == "" {
		return "test-key"
	}
	return f.key
}

// firstOutputLine is the first line of a command's output in a tool
// result: the lines of the result's framing (<output host=…>) are not
// output.
func firstOutputLine(result string) string {
	for _, l := range strings.Split(strings.TrimSpace(result), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "<") {
			return l
		}
	}
	return ""
}
