package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/agent"
)

// agent.stream_usage: false makes the OpenAI-compatible provider leave
// stream_options out, for servers that reject the field.
func TestStreamUsageCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	off, on := false, true
	for _, setting := range []*bool{nil, &on, &off} {
		p, _, err := newProvider(agent.Config{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "m", StreamUsage: setting})
		if err != nil {
			t.Fatal(err)
		}
		for range p.Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}}) {
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, want := range []bool{true, true, false} {
		if _, has := bodies[i]["stream_options"]; has != want {
			t.Errorf("request %d: stream_options sent = %v; want %v", i+1, has, want)
		}
	}
}
