package anthropic

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

// call is an expected tool call; Input is compared as JSON.
type call struct{ id, name, input string }

func TestStream(t *testing.T) {
	t.Parallel()
	const answer = "The root filesystem on local is 42% full (21G of 50G used)."
	overloadedBody, rateLimitBody := body(t, "overloaded.json"), body(t, "rate_limit.json")
	tests := []struct {
		name      string
		replies   []testfake.Reply
		wantTexts []string // nil: not checked piece by piece
		wantText  string
		wantCalls []call
		wantUsage *agent.Usage
		wantStop  agent.StopReason
		wantErr   []string // substrings of the error; nil: success
		wantReqs  int
		wantWaits []time.Duration
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
			wantCalls: []call{{"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "run_command", `{"target":"local","command":"df -h"}`}},
			wantUsage: &agent.Usage{InputTokens: 572, OutputTokens: 89}, wantStop: agent.StopToolUse,
			wantReqs: 1,
		},
		{
			name:     "two tool calls, one with empty input",
			replies:  []testfake.Reply{{SSE: "two_tool_calls.sse"}},
			wantText: "Checking web1 and listing the hosts.",
			wantCalls: []call{
				{"toolu_01WebUptime7Hx3kQ2", "run_command", `{"target":"web1","command":"uptime"}`},
				{"toolu_01ListHosts9Lw2mZ", "list_hosts", `{}`},
			},
			wantUsage: &agent.Usage{InputTokens: 530, OutputTokens: 120}, wantStop: agent.StopToolUse,
			wantReqs: 1,
		},
		{
			name:     "overloaded event before any content, then success",
			replies:  []testfake.Reply{{SSE: "overloaded.sse"}, {SSE: "text.sse"}},
			wantText: answer, wantUsage: &agent.Usage{InputTokens: 412, OutputTokens: 19}, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "529 then success",
			replies:  []testfake.Reply{{Status: 529, Body: overloadedBody}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "429 with retry-after, then success",
			replies:  []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: rateLimitBody}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name: "429 with retry-after-ms, which wins",
			replies: []testfake.Reply{
				{Status: 429, Header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, Body: rateLimitBody},
				{SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name:     "500 then success",
			replies:  []testfake.Reply{{Status: 500, Body: body(t, "api_error.json")}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "overloaded four times: gives up",
			replies:  []testfake.Reply{{SSE: "overloaded.sse"}, {Status: 529, Body: overloadedBody}, {SSE: "overloaded.sse"}, {Status: 529, Body: overloadedBody}},
			wantErr:  []string{"anthropic: the API is overloaded", "4 attempts", "try again in a few minutes"},
			wantReqs: 4, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:     "429 asking for an hour: not waited for",
			replies:  []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: rateLimitBody}},
			wantErr:  []string{"rate limited", "asks to wait 1h0m0s", "50,000 input tokens per minute"},
			wantReqs: 1,
		},
		{
			name:      "disconnect mid-stream keeps the text, no retry",
			replies:   []testfake.Reply{{SSE: "text.sse", CutAfter: 5}, {SSE: "text.sse"}},
			wantTexts: []string{"The root", " filesystem on local"},
			wantText:  "The root filesystem on local",
			wantErr:   []string{"connection to the model API broke mid-answer", "text so far is kept"},
			wantReqs:  1,
		},
		{
			name:     "disconnect before any content is retried",
			replies:  []testfake.Reply{{SSE: "text.sse", CutAfter: 2}, {SSE: "text.sse"}},
			wantText: answer, wantStop: agent.StopEndTurn,
			wantReqs: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:     "overloaded after text: an error, no retry",
			replies:  []testfake.Reply{{SSE: "overloaded_after_text.sse"}, {SSE: "text.sse"}},
			wantText: "The root filesystem",
			wantErr:  []string{"the response was cut off", "overloaded"},
			wantReqs: 1,
		},
		{
			name:     "401",
			replies:  []testfake.Reply{{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}},
			wantErr:  []string{"the API key was refused (401 authentication_error): set agent.api_key or ANTHROPIC_API_KEY"},
			wantReqs: 1,
		},
		{
			name:     "404 model",
			replies:  []testfake.Reply{{Status: 404, Body: body(t, "not_found.json")}},
			wantErr:  []string{`model "claude-test-1" or the endpoint was not found (404 not_found_error)`, "model: claude-sonnet-9-9", "set agent.model (or OPSBOT_MODEL)"},
			wantReqs: 1,
		},
		{
			name:     "400 context too long",
			replies:  []testfake.Reply{{Status: 400, Body: body(t, "too_long.json")}},
			wantErr:  []string{"the conversation is too long for the model", "215336 tokens", "start a new conversation or compact"},
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

// body is a recorded error body from testdata.
func body(t *testing.T, name string) string { return string(testfake.ReadTestdata(t, name)) }

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

// TestMalformedToolInput: a call whose input is not JSON is passed on
// with InputError set and input {}, so that the loop can tell the model
// and let it retry, unless the response stopped at the length bound, which
// explains the cut (the call is dropped and the stop reason says why).
func TestMalformedToolInput(t *testing.T) {
	t.Parallel()
	cut := strings.Replace(body(t, "tool_call.sse"), `" -h\"}"`, `" -h"`, 1)
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
		f := newFake(t, testfake.Reply{Raw: []byte(strings.Replace(cut, `"stop_reason":"tool_use"`, `"stop_reason":"max_tokens"`, 1))})
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
	f := newFake(t, testfake.Reply{SSE: "text.sse", HoldAfter: 4}, testfake.Reply{SSE: "text.sse"})
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
	f := newFake(t, testfake.Reply{Status: 529, Body: body(t, "overloaded.json")}, testfake.Reply{SSE: "text.sse"})
	ctx, cancel := context.WithCancel(context.Background())
	p, err := New(Config{APIKey: testKey, BaseURL: f.URL}, WithSleep(func(ctx context.Context, d time.Duration) error {
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
	f := newFake(t, testfake.Reply{SSE: "overloaded.sse"}, testfake.Reply{SSE: "text.sse"})
	var seen []string
	p, _ := newTestProvider(t, f, WithOnRetry(func(wait time.Duration, err error) {
		seen = append(seen, wait.String()+" "+err.Error())
	}))
	testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
	if len(seen) != 1 || !strings.Contains(seen[0], "1s anthropic: the API is overloaded") {
		t.Errorf("retries reported: %q", seen)
	}
}
