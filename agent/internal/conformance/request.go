package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// requestOnTheWire checks what the fake received for
// testfake.Conversation(): the path, the key, and the request's fields,
// as request.golden.json holds them, and no other.
func requestOnTheWire[S T[S]](t S, w Wire) {
	f := w.Fake(t, testfake.Reply{SSE: "text.sse"})
	p, _ := w.Provider(t, f)
	if o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation())); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	got := f.Requests()
	if len(got) != 1 {
		t.Fatalf("requests = %d, want 1", len(got))
	}
	r := got[0]
	if r.Path != w.Path {
		t.Errorf("path = %q, want %s", r.Path, w.Path)
	}
	if k := w.SentKey(r.Header); k != w.Key {
		t.Errorf("key sent = %q, want the configured key", k)
	}
	subset := map[string]any{}
	for _, k := range w.Fields {
		subset[k] = r.Body[k]
	}
	testfake.JSONEqual(t, "request body", subset, string(testfake.ReadTestdata(t, "request.golden.json")))
	for k := range r.Body {
		if !slices.Contains(w.Fields, k) {
			t.Errorf("unexpected request field %q = %v", k, r.Body[k])
		}
	}
}

// BadHistoryCase is a request the provider must refuse before any call.
type BadHistoryCase struct {
	Name string
	Req  agent.Request
	Want string
}

// badHistory: malformed history is an EventError before any call, for
// the cases every wire refuses and w's own.
func badHistory[S T[S]](t S, w Wire) {
	cases := append([]BadHistoryCase{
		{"bad role", agent.Request{Messages: []agent.Message{{Role: "system"}}}, `unknown role "system"`},
		{"bad tool input", agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Content: []agent.Block{
			{Type: agent.BlockToolUse, ID: "t1", Name: "x", Input: json.RawMessage(`[1]`)}}}}}, "not a JSON object"},
		{"bad schema", agent.Request{Tools: []agent.ToolSpec{{Name: "x", InputSchema: json.RawMessage(`{`)}}}, "tool x: input schema"},
	}, w.BadHistory...)
	for _, c := range cases {
		t.Run(c.Name, func(t S) {
			t.Parallel()
			f := w.Fake(t)
			p, _ := w.Provider(t, f)
			o := testfake.Collect(t, p.Stream(context.Background(), c.Req))
			if o.Err == nil || !strings.Contains(o.Err.Error(), c.Want) {
				t.Errorf("err = %v, want %q", o.Err, c.Want)
			}
			if n := len(f.Requests()); n != 0 {
				t.Errorf("%d requests made for a bad history", n)
			}
		})
	}
}

// Environment checks the fallbacks of an empty Config: key, base URL and
// model from w.Env's variables and OPSBOT_MODEL, else DefaultModel. It
// sets the environment, so its caller must not run in parallel.
func Environment[S T[S]](t S, w Wire) {
	t.Run("from the environment", func(t S) {
		f := w.Fake(t, testfake.Reply{SSE: "text.sse"})
		t.Setenv(w.Env.KeyVar, "sk-from-env")
		t.Setenv(w.Env.BaseURLVar, w.BaseURL(f.URL))
		t.Setenv("OPSBOT_MODEL", "model-from-env")
		r := oneRequest(t, w, f, provider.Config{})
		if w.SentKey(r.Header) != "sk-from-env" || r.Body["model"] != "model-from-env" {
			t.Errorf("key %q, model %v; want the environment's", w.SentKey(r.Header), r.Body["model"])
		}
	})
	t.Run("default model", func(t S) {
		t.Setenv("OPSBOT_MODEL", "")
		f := w.Fake(t, testfake.Reply{SSE: "text.sse"})
		r := oneRequest(t, w, f, provider.Config{APIKey: w.Key, BaseURL: w.BaseURL(f.URL)})
		if m := r.Body["model"]; m != w.Env.Model {
			t.Errorf("model = %v, want %s", m, w.Env.Model)
		}
	})
}

// oneRequest builds the provider from cfg, streams one short request
// and returns what the fake got.
func oneRequest[S T[S]](t S, w Wire, f *testfake.Server, cfg provider.Config) testfake.Received {
	t.Helper()
	p, err := w.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}}
	if o := testfake.Collect(t, p.Stream(context.Background(), req)); o.Err != nil {
		t.Fatalf("stream: %v", o.Err)
	}
	return f.Requests()[0]
}
