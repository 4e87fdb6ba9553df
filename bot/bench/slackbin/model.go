package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// model is a scripted OpenAI-compatible chat completions endpoint: each
// question "question N" is answered with answerText(N), streamed in
// pieces spread evenly over its duration, as a model writing at a steady
// pace does. It notes when each answer's stream began and ended.
type model struct {
	chars    int
	duration time.Duration
	// command, when set, is run by each answer first: the model asks for
	// run_command on the bot's own host, then streams its text once the
	// result is back (a task card in every answer).
	command string

	mu    sync.Mutex
	began map[int]time.Time
	ended map[int]time.Time
}

var questionN = regexp.MustCompile(`question (\d+)`)

// piece is the size of one streamed delta.
const piece = 40

// answerText is answer n's text, about chars characters, ending with a
// marker the watcher knows it by.
func answerText(n, chars int) string {
	var b strings.Builder
	for k := 0; b.Len() < chars-20; k++ {
		fmt.Fprintf(&b, "line %d of answer %d: all fine. ", k, n)
	}
	fmt.Fprintf(&b, "End of answer %d.", n)
	return b.String()
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n, ran := -1, false
	for _, msg := range req.Messages {
		if got := questionN.FindStringSubmatch(fmt.Sprint(msg.Content)); msg.Role == "user" && got != nil {
			n, _ = strconv.Atoi(got[1])
		}
		ran = ran || msg.Role == "tool"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if m.command != "" && !ran {
		args, _ := json.Marshal(map[string]string{"target": "local", "command": m.command})
		chunk(w, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": "run_command", "arguments": string(args)}}}}, nil)
		chunk(w, map[string]any{}, "tool_calls")
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	m.note(m.began, n)
	m.stream(w, r, answerText(n, m.chars))
	m.note(m.ended, n)
}

// stream writes text as chunks spread over m.duration, then the end.
func (m *model) stream(w http.ResponseWriter, r *http.Request, text string) {
	pieces := (len(text) + piece - 1) / piece
	every := m.duration / time.Duration(pieces)
	chunk(w, map[string]any{"role": "assistant", "content": ""}, nil)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; i < len(text); i += piece {
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		}
		chunk(w, map[string]any{"content": text[i:min(i+piece, len(text))]}, nil)
	}
	chunk(w, map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (m *model) note(at map[int]time.Time, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at[n] = time.Now()
}

// endOf is when answer n's model stream ended (zero: not yet).
func (m *model) endOf(n int) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended[n]
}

// chunk writes one chat.completion.chunk event.
func chunk(w http.ResponseWriter, delta map[string]any, finish any) {
	c := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	b, _ := json.Marshal(c)
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}
