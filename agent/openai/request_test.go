package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

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
