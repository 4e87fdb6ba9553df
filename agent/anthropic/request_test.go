package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// TestRequestOnTheWire checks what the fake received: path, key, version,
// model, token bound, system prompt, the history with its tool calls and
// results, and the tool definitions with their schemas.
func TestRequestOnTheWire(t *testing.T) {
	t.Parallel()
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	p, _ := newTestProvider(t, f)
	if o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation())); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	got := f.Requests()
	if len(got) != 1 {
		t.Fatalf("requests = %d, want 1", len(got))
	}
	r := got[0]
	if r.Path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", r.Path)
	}
	if k := sentKey(r.Header); k != testKey {
		t.Errorf("key sent = %q, want the configured key", k)
	}
	if r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header")
	}
	subset := map[string]any{}
	for _, k := range []string{"model", "max_tokens", "stream", "system", "messages", "tools"} {
		subset[k] = r.Body[k]
	}
	testfake.JSONEqual(t, "request body", subset, string(testfake.ReadTestdata(t, "request.golden.json")))
	for k := range r.Body {
		switch k {
		case "model", "max_tokens", "stream", "system", "messages", "tools":
		default:
			t.Errorf("unexpected request field %q = %v", k, r.Body[k])
		}
	}
}

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

// TestEnvironmentFallback: an empty Config takes key, base URL and model
// from ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and OPSBOT_MODEL.
func TestEnvironmentFallback(t *testing.T) {
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", f.URL)
	t.Setenv("OPSBOT_MODEL", "claude-from-env")
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}}
	if o := testfake.Collect(t, p.Stream(context.Background(), req)); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	r := f.Requests()[0]
	if sentKey(r.Header) != "sk-ant-from-env" || r.Body["model"] != "claude-from-env" {
		t.Errorf("key %q, model %v; want the environment's", sentKey(r.Header), r.Body["model"])
	}
}

// TestDefaultModel: with no model in the config, the environment or the
// request, DefaultModel is asked for.
func TestDefaultModel(t *testing.T) {
	t.Setenv("OPSBOT_MODEL", "")
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	p, err := New(Config{APIKey: testKey, BaseURL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	if o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation())); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	if m := f.Requests()[0].Body["model"]; m != DefaultModel {
		t.Errorf("model = %v, want %s", m, DefaultModel)
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

// TestBadHistory: malformed history is an EventError before any call.
func TestBadHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  agent.Request
		want string
	}{
		{"bad role", agent.Request{Messages: []agent.Message{{Role: "system"}}}, `unknown role "system"`},
		{"bad block", agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: "image"}}}}}, `unknown block type "image"`},
		{"bad tool input", agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Content: []agent.Block{
			{Type: agent.BlockToolUse, ID: "t1", Name: "x", Input: json.RawMessage(`[1]`)}}}}}, "not a JSON object"},
		{"bad schema", agent.Request{Tools: []agent.ToolSpec{{Name: "x", InputSchema: json.RawMessage(`{`)}}}, "tool x: input schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			p, _ := newTestProvider(t, f)
			o := testfake.Collect(t, p.Stream(context.Background(), tt.req))
			if o.Err == nil || !strings.Contains(o.Err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", o.Err, tt.want)
			}
			if n := len(f.Requests()); n != 0 {
				t.Errorf("%d requests made for a bad history", n)
			}
		})
	}
}
