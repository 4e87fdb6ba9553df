package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// TestRequestOnTheWire checks what the fake received: path, bearer key,
// model, token bound, usage request, and the translation of the history
// (system message; assistant tool_calls; one "tool" message per result,
// an error result marked in words; the user's text after the results)
// and of the tool definitions.
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
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %q, want /v1/chat/completions", r.Path)
	}
	if a := r.Header.Get("Authorization"); a != "Bearer "+testKey {
		t.Errorf("authorization = %q, want the configured key as a bearer token", a)
	}
	keys := []string{"model", "max_tokens", "stream", "stream_options", "messages", "tools"}
	subset := map[string]any{}
	for _, k := range keys {
		subset[k] = r.Body[k]
	}
	testfake.JSONEqual(t, "request body", subset, string(testfake.ReadTestdata(t, "request.golden.json")))
	for k := range r.Body {
		if !strings.Contains(strings.Join(keys, " "), k) {
			t.Errorf("unexpected request field %q = %v", k, r.Body[k])
		}
	}
}

// TestRequestOptions: model and token bound (request over config; OpenAI's
// own API gets max_completion_tokens, other servers max_tokens; no bound
// when none is set), and the usage request can be turned off.
func TestRequestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      Config
		official bool
		opts     []Option
		req      agent.Request
		want     string // the request fields below, as JSON
	}{
		{"config", Config{Model: "m-cfg", MaxTokens: 2000}, false, nil, agent.Request{},
			`{"model":"m-cfg","max_tokens":2000,"max_completion_tokens":null,"stream_options":{"include_usage":true}}`},
		{"request wins", Config{Model: "m-cfg", MaxTokens: 2000}, false, nil, agent.Request{Model: "m-req", MaxTokens: 300},
			`{"model":"m-req","max_tokens":300,"max_completion_tokens":null,"stream_options":{"include_usage":true}}`},
		{"no bound", Config{Model: "m-cfg"}, false, nil, agent.Request{},
			`{"model":"m-cfg","max_tokens":null,"max_completion_tokens":null,"stream_options":{"include_usage":true}}`},
		{"official API", Config{Model: "gpt-x", MaxTokens: 500}, true, nil, agent.Request{},
			`{"model":"gpt-x","max_tokens":null,"max_completion_tokens":500,"stream_options":{"include_usage":true}}`},
		{"without stream usage", Config{Model: "m-cfg"}, false, []Option{WithoutStreamUsage()}, agent.Request{},
			`{"model":"m-cfg","max_tokens":null,"max_completion_tokens":null,"stream_options":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, testfake.Reply{SSE: "text.sse"})
			tt.cfg.APIKey, tt.cfg.BaseURL = testKey, f.URL+"/v1"
			p, err := New(tt.cfg, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			p.official = tt.official // the fake is not api.openai.com; see TestIsOfficial
			tt.req.Messages = []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}
			if o := testfake.Collect(t, p.Stream(context.Background(), tt.req)); o.Err != nil {
				t.Fatalf("stream: %v", o.Err)
			}
			body := f.Requests()[0].Body
			got := map[string]any{}
			for _, k := range []string{"model", "max_tokens", "max_completion_tokens", "stream_options"} {
				got[k] = body[k]
			}
			testfake.JSONEqual(t, "fields", got, tt.want)
		})
	}
}

// TestIsOfficial: only OpenAI's own host counts as the official API.
func TestIsOfficial(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"":                             true,
		"https://api.openai.com/v1":    true,
		"https://api.deepseek.com/v1":  false,
		"http://localhost:11434/v1":    false,
		"http://vllm.internal:8000/v1": false,
	} {
		if got := isOfficial(url); got != want {
			t.Errorf("isOfficial(%q) = %v, want %v", url, got, want)
		}
	}
}

// TestEnvironmentFallback: an empty Config takes key, base URL and model
// from OPENAI_API_KEY, OPENAI_BASE_URL and OPSBOT_MODEL.
func TestEnvironmentFallback(t *testing.T) {
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", f.URL+"/v1")
	t.Setenv("OPSBOT_MODEL", "model-from-env")
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}}
	if o := testfake.Collect(t, p.Stream(context.Background(), req)); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	r := f.Requests()[0]
	if r.Header.Get("Authorization") != "Bearer sk-from-env" || r.Body["model"] != "model-from-env" {
		t.Errorf("auth %q, model %v; want the environment's", r.Header.Get("Authorization"), r.Body["model"])
	}
}

// TestLocalServerWithoutKey: a server such as Ollama needs no key, and
// none is sent.
func TestLocalServerWithoutKey(t *testing.T) {
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	t.Setenv("OPENAI_API_KEY", "")
	p, err := New(Config{BaseURL: f.URL + "/v1", Model: "llama3.2"})
	if err != nil {
		t.Fatal(err)
	}
	if o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation())); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	if a := f.Requests()[0].Header.Get("Authorization"); a != "" {
		t.Errorf("authorization = %q, want none", a)
	}
}

// TestDefaultModel: with no model in the config, the environment or the
// request, DefaultModel is asked for.
func TestDefaultModel(t *testing.T) {
	t.Setenv("OPSBOT_MODEL", "")
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	p, err := New(Config{APIKey: testKey, BaseURL: f.URL + "/v1"})
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

// TestNewRefuses says what to set when OpenAI's own API has no key.
func TestNewRefuses(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPSBOT_MODEL", "")
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "gpt-x"}, "set agent.api_key or OPENAI_API_KEY"},
		{Config{BaseURL: "https://api.openai.com/v1"}, "set agent.api_key or OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
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
		{"tool_use from the user", agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockToolUse}}}}}, `block type "tool_use" in a user message`},
		{"bad tool input", agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Content: []agent.Block{
			{Type: agent.BlockToolUse, ID: "t1", Name: "x", Input: json.RawMessage(`"x"`)}}}}}, "not a JSON object"},
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
