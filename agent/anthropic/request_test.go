package anthropic

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// sentKey is the API key a request carried: SDK v2 sends it as a bearer
// token; x-api-key is the older header, accepted too.
func sentKey(h http.Header) string {
	if k := h.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
}

// TestModelAndMaxTokens: the request's values win over the config's,
// which win over the defaults.
func TestModelAndMaxTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		req       agent.Request
		wantModel string
		wantMax   float64
	}{
		{"config", Config{Model: "claude-cfg", MaxTokens: 2000}, agent.Request{}, "claude-cfg", 2000},
		{"request wins", Config{Model: "claude-cfg", MaxTokens: 2000}, agent.Request{Model: "claude-req", MaxTokens: 300}, "claude-req", 300},
		{"defaults", Config{Model: DefaultModel}, agent.Request{}, DefaultModel, DefaultMaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, testfake.Reply{SSE: "text.sse"})
			tt.cfg.APIKey, tt.cfg.BaseURL = testKey, f.URL
			p, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			tt.req.Messages = []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}
			if o := testfake.Collect(t, p.Stream(context.Background(), tt.req)); o.Err != nil {
				t.Fatalf("stream: %v", o.Err)
			}
			body := f.Requests()[0].Body
			if body["model"] != tt.wantModel || body["max_tokens"] != tt.wantMax {
				t.Errorf("model, max_tokens = %v, %v; want %v, %v", body["model"], body["max_tokens"], tt.wantModel, tt.wantMax)
			}
		})
	}
}

// TestNewWithoutKey says where to put the key.
func TestNewWithoutKey(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	_, err := New(Config{})
	if err == nil || !strings.Contains(err.Error(), "agent.api_key or ANTHROPIC_API_KEY") {
		t.Fatalf("New without a key: %v", err)
	}
}

// TestVersionHeader: every call names the API version it speaks.
func TestVersionHeader(t *testing.T) {
	t.Parallel()
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	p, _ := newTestProvider(t, f)
	if o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation())); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	if r := f.Requests(); len(r) != 1 || r[0].Header.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header")
	}
}
