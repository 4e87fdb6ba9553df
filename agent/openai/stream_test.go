package openai

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// call is an expected tool call; input is compared as JSON.
type call struct{ id, name, input string }

func TestStream(t *testing.T) {
	t.Parallel()
	const answer = "The root filesystem on local is 42% full (21G of 50G used)."
	body := func(name string) string { return string(testfake.ReadTestdata(t, name)) }
	retryIn := func(h, v string) map[string]string { return map[string]string{h: v} }
	tests := []struct {
		name        string
		replies     []testfake.Reply
		wantTexts   []string // nil: not checked piece by piece
		wantText    string
		wantCalls   []call
		wantUsage   *agent.Usage
		wantNoUsage bool
		wantStop    agent.StopReason
		wantErr     []string // substrings of the error; nil: success
		wantReqs    int
		wantWaits   []time.Duration
	}{
		{
			name:      "text only",
			replies:   []testfake.Reply{{SSE: "text.sse"}},
			wantTexts: []string{"The root", " filesystem on local", " is 42% full", " (21G of 50G used)."},
			wantText:  answer, wantUsage: &agent.Usage{InputTokens: 412, OutputTokens: 19}, wantStop: agent.StopEndTurn,
			wantReqs: 1,
		},
		{
			name:      "text and one tool call in pieces",
			replies:   []testfake.Reply{{SSE: "tool_call.sse"}},
			wantText:  "I'll check the disk usage.",
			wantCalls: []call{{"call_DdmO9pD3xa9XTPNJ32zg2hcA", "run_command", `{"target":"local","command":"df -h"}`}},
			wantUsage: &agent.Usage{InputTokens: 572, OutputTokens: 89}, wantStop: agent.StopToolUse,
			wantReqs: 1,
		},
		{
			name:     "two tool calls, one with empty arguments",
			replies:  []testfake.Reply{{SSE: "two_tool_calls.sse"}},
			wantText: "Checking web1 and listing the hosts.",
			wantCalls: []call{
				{"call_wEbUptIme7Hx3kQ2aa", "run_command", `{"target":"web1","command":"uptime"}`},
				{"call_LisTHosts9Lw2mZbb", "list_hosts", `{}`},
			},
			wantUsage: &agent.Usage{InputTokens: 530, OutputTokens: 120}, wantStop: agent.StopToolUse,
			wantReqs: 1,
		},
		{
			name:      "compatible server: no id, one chunk, finish_reason stop, no usage",
			replies:   []testfake.Reply{{SSE: "compat_tool_call.sse"}},
			wantCalls: []call{{"call_0", "run_command", `{"target":"local","command":"df -h"}`}},
			wantStop:  agent.StopToolUse, wantNoUsage: true,
			wantReqs: 1,
		},
		{
			name:     "overloaded error chunk before any content, then success",
			replies:  []testfake.Reply{{SSE: "overloaded.sse"}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "503 then success",
			replies:  []testfake.Reply{{Status: 503, Body: body("overloaded.json")}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "429 with retry-after, then success",
			replies:  []testfake.Reply{{Status: 429, Header: retryIn("Retry-After", "7"), Body: body("rate_limit.json")}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name: "429 with retry-after-ms, which wins",
			replies: []testfake.Reply{
				{Status: 429, Header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, Body: body("rate_limit.json")},
				{SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name:     "429 insufficient_quota: waiting does not help",
			replies:  []testfake.Reply{{Status: 429, Body: body("insufficient_quota.json")}},
			wantErr:  []string{"openai: the account is out of quota (429 insufficient_quota)", "check its plan and billing"},
			wantReqs: 1,
		},
		{
			name: "overloaded four times: gives up",
			replies: []testfake.Reply{{Status: 503, Body: body("overloaded.json")}, {SSE: "overloaded.sse"},
				{Status: 503, Body: body("overloaded.json")}, {Status: 503, Body: body("overloaded.json")}},
			wantErr:  []string{"openai: the server is overloaded (503 server_error, 4 attempts)", "try again in a few minutes"},
			wantReqs: 4, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:     "429 asking for an hour: not waited for",
			replies:  []testfake.Reply{{Status: 429, Header: retryIn("Retry-After", "3600"), Body: body("rate_limit.json")}},
			wantErr:  []string{"rate limited", "asks to wait 1h0m0s", "Limit 30000"},
			wantReqs: 1,
		},
		{
			name:      "disconnect mid-stream keeps the text, no retry",
			replies:   []testfake.Reply{{SSE: "text.sse", CutAfter: 3}, {SSE: "text.sse"}},
			wantTexts: []string{"The root", " filesystem on local"},
			wantText:  "The root filesystem on local",
			wantErr:   []string{"connection to the model API broke mid-answer", "text so far is kept"},
			wantReqs:  1,
		},
		{
			name:     "disconnect before any content is retried",
			replies:  []testfake.Reply{{SSE: "text.sse", CutAfter: 1}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "clean end without finish_reason after text: an error",
			replies:  []testfake.Reply{{Raw: []byte(strings.Join(strings.SplitAfter(body("text.sse"), "\n\n")[:3], "") + "data: [DONE]\n\n")}},
			wantText: "The root filesystem on local",
			wantErr:  []string{"closed the stream before the answer was complete", "text so far is kept"},
			wantReqs: 1,
		},
		{
			name:     "error chunk after text: an error, no retry",
			replies:  []testfake.Reply{{SSE: "error_after_text.sse"}, {SSE: "text.sse"}},
			wantText: "The root filesystem",
			wantErr:  []string{"the response was cut off: the server failed (server_error)", "Sorry about that"},
			wantReqs: 1,
		},
		{
			name:     "401",
			replies:  []testfake.Reply{{Status: 401, Body: body("unauthorized.json")}},
			wantErr:  []string{"the API key was refused (401 invalid_api_key): set agent.api_key or OPENAI_API_KEY"},
			wantReqs: 1,
		},
		{
			name:     "404 model on OpenAI",
			replies:  []testfake.Reply{{Status: 404, Body: body("not_found.json")}},
			wantErr:  []string{`model "gpt-test-1" or the endpoint was not found (404 model_not_found)`, "gpt-9-turbo", "set agent.model (or OPSBOT_MODEL)"},
			wantReqs: 1,
		},
		{
			name:     "404 model on Ollama",
			replies:  []testfake.Reply{{Status: 404, Body: body("ollama_not_found.json")}},
			wantErr:  []string{"not found (404 api_error)", `model "llama9" not found, try pulling it first`},
			wantReqs: 1,
		},
		{
			name:     "400 context too long",
			replies:  []testfake.Reply{{Status: 400, Body: body("too_long.json")}},
			wantErr:  []string{"the conversation is too long for the model (400 context_length_exceeded)", "130532 tokens", "start a new conversation or compact"},
			wantReqs: 1,
		},
		{
			name:     "a proxy's HTML 502, four times",
			replies:  []testfake.Reply{{Status: 502, Body: "<html>502</html>"}, {Status: 502, Body: "<html>502</html>"}, {Status: 502, Body: "<html>502</html>"}, {Status: 502, Body: "<html>502</html>"}},
			wantErr:  []string{"openai: the server failed (502, 4 attempts): try again later"},
			wantReqs: 4, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:     "a bare string error body",
			replies:  []testfake.Reply{{Status: 400, Body: `{"error":"invalid tool schema for run_command"}`}},
			wantErr:  []string{"the server rejected the request (400)", "invalid tool schema for run_command"},
			wantReqs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.replies...)
			p, s := newTestProvider(t, f)
			o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
			checkOutcome(t, o, tt.wantTexts, tt.wantText, tt.wantCalls, tt.wantUsage, tt.wantStop, tt.wantErr)
			if tt.wantNoUsage && o.Usage != nil {
				t.Errorf("usage %+v from a server that sent none", o.Usage)
			}
			reqs := f.Requests()
			if len(reqs) != tt.wantReqs {
				t.Errorf("requests = %d, want %d", len(reqs), tt.wantReqs)
			}
			for i := 1; i < len(reqs); i++ {
				if !reflect.DeepEqual(reqs[i].Body, reqs[0].Body) {
					t.Errorf("retry %d sent a different request", i)
				}
			}
			if w := s.All(); !reflect.DeepEqual(w, tt.wantWaits) {
				t.Errorf("waits = %v, want %v", w, tt.wantWaits)
			}
		})
	}
}

// checkOutcome compares what the caller saw with the expectations.
func checkOutcome(t *testing.T, o testfake.Outcome, texts []string, text string, calls []call, usage *agent.Usage, stop agent.StopReason, errs []string) {
	t.Helper()
	if texts != nil && !reflect.DeepEqual(o.Texts, texts) {
		t.Errorf("text deltas = %q, want %q", o.Texts, texts)
	}
	if o.Text() != text {
		t.Errorf("text = %q, want %q", o.Text(), text)
	}
	if len(o.Calls) != len(calls) {
		t.Fatalf("tool calls = %+v, want %d", o.Calls, len(calls))
	}
	for i, c := range calls {
		got := o.Calls[i]
		if got.Type != agent.BlockToolUse || got.ID != c.id || got.Name != c.name {
			t.Errorf("call %d = %s %s %s, want tool_use %s %s", i, got.Type, got.ID, got.Name, c.id, c.name)
		}
		if !json.Valid(got.Input) {
			t.Errorf("call %d input is not JSON: %s", i, got.Input)
		}
		testfake.JSONEqual(t, "call input", got.Input, c.input)
	}
	if usage != nil && (o.Usage == nil || *o.Usage != *usage) {
		t.Errorf("usage = %+v, want %+v", o.Usage, usage)
	}
	if o.Stop != stop {
		t.Errorf("stop = %q, want %q", o.Stop, stop)
	}
	if errs == nil {
		if o.Err != nil {
			t.Errorf("err = %v, want none", o.Err)
		}
		return
	}
	if o.Err == nil {
		t.Fatalf("no error, want one with %q", errs)
	}
	for _, want := range errs {
		if !strings.Contains(o.Err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", o.Err, want)
		}
	}
}

// TestFinishReasons maps every finish_reason onto a neutral stop reason.
func TestFinishReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		finish   string
		hasCalls bool
		want     agent.StopReason
	}{
		{"stop", false, agent.StopEndTurn},
		{"stop", true, agent.StopToolUse},
		{"tool_calls", true, agent.StopToolUse},
		{"function_call", true, agent.StopToolUse},
		{"length", false, agent.StopMaxTokens},
		{"content_filter", false, agent.StopRefusal},
		{"something_new", false, "something_new"},
	}
	for _, tt := range tests {
		if got := stopReason(tt.finish, tt.hasCalls); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", tt.finish, tt.hasCalls, got, tt.want)
		}
	}
}

// TestMalformedToolInput: a call whose input is not JSON is passed on
// with InputError set and input {}, so that the loop can tell the model
// and let it retry, unless the response stopped at the length bound, which
// explains the cut (the call is dropped and the stop reason says why).
func TestMalformedToolInput(t *testing.T) {
	t.Parallel()
	cut := strings.Replace(string(testfake.ReadTestdata(t, "tool_call.sse")), `"and\": \"df -h\"}"`, `"and\": \"df -h"`, 1)
	t.Run("passed on", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, testfake.Reply{Raw: []byte(cut)})
		p, _ := newTestProvider(t, f)
		o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
		if o.Err != nil || o.Stop != agent.StopToolUse || len(o.Calls) != 1 {
			t.Fatalf("outcome = %+v; want one call and tool_use", o)
		}
		if c := o.Calls[0]; c.Name != "run_command" || string(c.Input) != "{}" || !strings.Contains(c.InputError, "not a JSON object") {
			t.Errorf("call = %+v", c)
		}
	})
	t.Run("cut by the bound", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, testfake.Reply{Raw: []byte(strings.Replace(cut, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`, 1))})
		p, _ := newTestProvider(t, f)
		o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
		checkOutcome(t, o, nil, "I'll check the disk usage.", nil, nil, agent.StopMaxTokens, nil)
	})
}

// TestCallerStops: breaking out of the loop ends the call quietly.
func TestCallerStops(t *testing.T) {
	t.Parallel()
	f := newFake(t, testfake.Reply{SSE: "text.sse"})
	p, _ := newTestProvider(t, f)
	n := 0
	for ev := range p.Stream(context.Background(), testfake.Conversation()) {
		n++
		if ev.Kind != agent.EventText {
			t.Errorf("first event = %+v", ev)
		}
		break
	}
	if n != 1 || len(f.Requests()) != 1 {
		t.Errorf("events %d, requests %d; want 1, 1", n, len(f.Requests()))
	}
}

// TestCancelMidStream: cancelling ctx ends the stream with an error that
// is context.Canceled; the text before stays, and nothing is retried.
func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	f := newFake(t, testfake.Reply{SSE: "text.sse", HoldAfter: 2}, testfake.Reply{SSE: "text.sse"})
	p, s := newTestProvider(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var o testfake.Outcome
	for ev := range p.Stream(ctx, testfake.Conversation()) {
		switch ev.Kind {
		case agent.EventText:
			o.Texts = append(o.Texts, ev.Text)
			cancel()
		case agent.EventError:
			o.Err = ev.Err
		}
	}
	if o.Text() != "The root" || !errors.Is(o.Err, context.Canceled) {
		t.Errorf("text %q, err %v; want the first delta and context.Canceled", o.Text(), o.Err)
	}
	if len(f.Requests()) != 1 || len(s.All()) != 0 {
		t.Errorf("requests %d, waits %v; want 1 and none", len(f.Requests()), s.All())
	}
}

// TestRetryWaitsForCancel: a cancel during the wait before a retry ends
// the stream with context.Canceled and no second call.
func TestRetryWaitsForCancel(t *testing.T) {
	t.Parallel()
	f := newFake(t, testfake.Reply{Status: 503, Body: string(testfake.ReadTestdata(t, "overloaded.json"))}, testfake.Reply{SSE: "text.sse"})
	ctx, cancel := context.WithCancel(context.Background())
	p, err := New(Config{APIKey: testKey, BaseURL: f.URL + "/v1", Model: "m"}, WithSleep(func(ctx context.Context, d time.Duration) error {
		cancel()
		return streamretry.Sleep(ctx, time.Hour)
	}))
	if err != nil {
		t.Fatal(err)
	}
	o := testfake.Collect(t, p.Stream(ctx, testfake.Conversation()))
	if !errors.Is(o.Err, context.Canceled) || len(f.Requests()) != 1 {
		t.Errorf("err %v, requests %d; want context.Canceled after 1", o.Err, len(f.Requests()))
	}
}

// TestOnRetry reports each retry with its wait and a worded error.
func TestOnRetry(t *testing.T) {
	t.Parallel()
	f := newFake(t, testfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: string(testfake.ReadTestdata(t, "rate_limit.json"))}, testfake.Reply{SSE: "text.sse"})
	var seen []string
	p, _ := newTestProvider(t, f, WithOnRetry(func(wait time.Duration, err error) {
		seen = append(seen, wait.String()+" "+err.Error())
	}))
	testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
	if len(seen) != 1 || !strings.Contains(seen[0], "2s openai: rate limited by the server") {
		t.Errorf("retries reported: %q", seen)
	}
}
