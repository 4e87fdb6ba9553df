//go:build soak

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// soakModel is the scripted model of the kill loop, OpenAI-compatible and
// streaming like the real one (fakeLLM's wire format): "please fix
// MARKER" asks to run `echo MARKER >> runs` (which needs approval); "tell
// me a story" streams an answer in 40 pieces, 25 ms apart, so that kills
// land mid-stream; a tool result is answered with its first line.
type soakModel struct {
	runs string
}

func (m *soakModel) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(m.handle))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (m *soakModel) handle(w http.ResponseWriter, r *http.Request) {
	var req fakeLLMRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	f := &fakeLLM{}
	w.Header().Set("Content-Type", "text/event-stream")
	role, text := req.last()
	switch {
	case role == "tool":
		f.text(w, []string{"The command said: ", firstOutputLine(text)})
	case strings.Contains(text, "please fix "):
		f.toolCall(w, "echo "+markerIn(text)+" >> "+m.runs)
	case strings.Contains(text, "tell me a story"):
		f.chunk(w, map[string]any{"role": "assistant", "content": ""}, nil)
		for i := range 40 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(25 * time.Millisecond):
			}
			f.chunk(w, map[string]any{"content": fmt.Sprintf("word%d ", i)}, nil)
		}
		f.chunk(w, map[string]any{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	default:
		f.text(w, []string{"ok"})
	}
}
