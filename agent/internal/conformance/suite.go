package conformance

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// answer is text.sse's whole answer.
const answer = "The root filesystem on local is 42% full (21G of 50G used)."

// Suite runs every test a provider must pass, as parallel subtests.
func Suite[S T[S]](t S, w Wire) {
	t.Parallel()
	t.Run("Stream", func(t S) { t.Parallel(); Run(t, w, StreamCases(t, w)) })
	t.Run("MalformedToolInput", func(t S) { t.Parallel(); malformedToolInput(t, w) })
	t.Run("CallerStops", func(t S) { t.Parallel(); callerStops(t, w) })
	t.Run("CancelMidStream", func(t S) { t.Parallel(); cancelMidStream(t, w) })
	t.Run("RetryWaitsForCancel", func(t S) { t.Parallel(); retryWaitsForCancel(t, w) })
	t.Run("OnRetry", func(t S) { t.Parallel(); onRetry(t, w) })
	t.Run("RequestOnTheWire", func(t S) { t.Parallel(); requestOnTheWire(t, w) })
	t.Run("BadHistory", func(t S) { t.Parallel(); badHistory(t, w) })
	t.Run("ErrorsNeverContainTheKey", func(t S) { t.Parallel(); keyNeverLeaks(t, w, w.ExtraLeaks) })
}

// StreamCases are the exchanges every provider must get right.
func StreamCases[S T[S]](t S, w Wire) []Case {
	body := func(name string) string { return string(testfake.ReadTestdata(t, name)) }
	overloaded := testfake.Reply{Status: w.OverloadedStatus, Body: body("overloaded.json")}
	rateLimit := body("rate_limit.json")
	usage := &agent.Usage{InputTokens: 412, OutputTokens: 19}
	return []Case{
		{Name: "text only", Replies: []testfake.Reply{{SSE: "text.sse"}},
			Texts: []string{"The root", " filesystem on local", " is 42% full", " (21G of 50G used)."},
			Text:  answer, Usage: usage, Stop: agent.StopEndTurn, Requests: 1},
		// tool_call.sse reads 100 of its 572 prompt tokens from the cache.
		{Name: "text and one tool call in pieces", Replies: []testfake.Reply{{SSE: "tool_call.sse"}},
			Text: "I'll check the disk usage.", Calls: []Call{{w.ToolCallID, "run_command", `{"target":"local","command":"df -h"}`}},
			Usage: &agent.Usage{InputTokens: 572, CachedTokens: 100, OutputTokens: 89}, Stop: agent.StopToolUse, Requests: 1},
		{Name: "two tool calls, one with empty input", Replies: []testfake.Reply{{SSE: "two_tool_calls.sse"}},
			Text: "Checking web1 and listing the hosts.",
			Calls: []Call{{w.TwoCallIDs[0], "run_command", `{"target":"web1","command":"uptime"}`},
				{w.TwoCallIDs[1], "list_hosts", `{}`}},
			Usage: &agent.Usage{InputTokens: 530, OutputTokens: 120}, Stop: agent.StopToolUse, Requests: 1},
		{Name: "overloaded event before any content, then success", Replies: []testfake.Reply{{SSE: "overloaded.sse"}, {SSE: "text.sse"}},
			Text: answer, Usage: usage, Stop: agent.StopEndTurn, Requests: 2, Waits: []time.Duration{time.Second}},
		{Name: "overloaded status, then success", Replies: []testfake.Reply{overloaded, {SSE: "text.sse"}},
			Text: answer, Stop: agent.StopEndTurn, Requests: 2, Waits: []time.Duration{time.Second}},
		{Name: "429 with retry-after, then success",
			Replies: []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: rateLimit}, {SSE: "text.sse"}},
			Text:    answer, Stop: agent.StopEndTurn, Requests: 2, Waits: []time.Duration{7 * time.Second}},
		{Name: "429 with retry-after-ms, which wins",
			Replies: []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, Body: rateLimit}, {SSE: "text.sse"}},
			Text:    answer, Stop: agent.StopEndTurn, Requests: 2, Waits: []time.Duration{1500 * time.Millisecond}},
		{Name: "overloaded four times: gives up", Replies: []testfake.Reply{{SSE: "overloaded.sse"}, overloaded, {SSE: "overloaded.sse"}, overloaded},
			Err: w.Errors["overloaded four times"], Requests: 4, Waits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{Name: "429 asking for an hour: not waited for",
			Replies: []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: rateLimit}},
			Err:     w.Errors["429 asking for an hour"], Requests: 1},
		{Name: "disconnect mid-stream keeps the text, no retry", Replies: []testfake.Reply{{SSE: "text.sse", CutAfter: w.CutMidText}, {SSE: "text.sse"}},
			Texts: []string{"The root", " filesystem on local"}, Text: "The root filesystem on local",
			Err: []string{"connection to the model API broke mid-answer", "text so far is kept"}, Requests: 1},
		{Name: "disconnect before any content is retried", Replies: []testfake.Reply{{SSE: "text.sse", CutAfter: w.CutBeforeText}, {SSE: "text.sse"}},
			Text: answer, Stop: agent.StopEndTurn, Requests: 2, Waits: []time.Duration{time.Second}},
		{Name: "error after text: an error, no retry", Replies: []testfake.Reply{{SSE: w.ErrorAfterText}, {SSE: "text.sse"}},
			Text: "The root filesystem", Err: w.Errors["error after text"], Requests: 1},
		{Name: "401", Replies: []testfake.Reply{{Status: 401, Body: body("unauthorized.json")}}, Err: w.Errors["401"], Requests: 1},
		{Name: "404 model", Replies: []testfake.Reply{{Status: 404, Body: body("not_found.json")}}, Err: w.Errors["404 model"], Requests: 1},
		{Name: "400 context too long", Replies: []testfake.Reply{{Status: 400, Body: body("too_long.json")}}, Err: w.Errors["400 context too long"], Requests: 1},
	}
}

// malformedToolInput: a call whose input is not JSON is passed on with
// InputError set and input {}, so that the loop can tell the model and
// let it retry, unless the response stopped at the length bound, which
// explains the cut (the call is dropped and the stop reason says why).
func malformedToolInput[S T[S]](t S, w Wire) {
	broken := w.BrokenInput(string(testfake.ReadTestdata(t, "tool_call.sse")))
	t.Run("passed on", func(t S) {
		t.Parallel()
		f := w.Fake(t, testfake.Reply{Raw: []byte(broken)})
		p, _ := w.Provider(t, f)
		o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
		if o.Err != nil || o.Stop != agent.StopToolUse || len(o.Calls) != 1 {
			t.Fatalf("outcome = %+v; want one call and tool_use", o)
		}
		if c := o.Calls[0]; c.Name != "run_command" || string(c.Input) != "{}" || !strings.Contains(c.InputError, "not a JSON object") {
			t.Errorf("call = %+v", c)
		}
	})
	t.Run("cut by the bound", func(t S) {
		t.Parallel()
		f := w.Fake(t, testfake.Reply{Raw: []byte(w.AtLength(broken))})
		p, _ := w.Provider(t, f)
		o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
		Check(t, o, Case{Text: "I'll check the disk usage.", Stop: agent.StopMaxTokens})
	})
}

// callerStops: breaking out of the loop ends the call quietly.
func callerStops[S T[S]](t S, w Wire) {
	f := w.Fake(t, testfake.Reply{SSE: "text.sse"})
	p, _ := w.Provider(t, f)
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

// cancelMidStream: cancelling ctx ends the stream with an error that is
// context.Canceled; the text before stays, and nothing is retried.
func cancelMidStream[S T[S]](t S, w Wire) {
	f := w.Fake(t, testfake.Reply{SSE: "text.sse", HoldAfter: w.HoldAfterFirst}, testfake.Reply{SSE: "text.sse"})
	p, s := w.Provider(t, f)
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

// retryWaitsForCancel: a cancel during the wait before a retry ends the
// stream with context.Canceled and no second call.
func retryWaitsForCancel[S T[S]](t S, w Wire) {
	overloaded := testfake.Reply{Status: w.OverloadedStatus, Body: string(testfake.ReadTestdata(t, "overloaded.json"))}
	f := w.Fake(t, overloaded, testfake.Reply{SSE: "text.sse"})
	ctx, cancel := context.WithCancel(context.Background())
	p, err := w.New(w.config(f), provider.WithSleep(func(ctx context.Context, d time.Duration) error {
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

// onRetry reports each retry with its wait and a worded error.
func onRetry[S T[S]](t S, w Wire) {
	f := w.Fake(t, testfake.Reply{SSE: "overloaded.sse"}, testfake.Reply{SSE: "text.sse"})
	var seen []string
	p, _ := w.Provider(t, f, provider.WithOnRetry(func(wait time.Duration, err error) {
		seen = append(seen, wait.String()+" "+err.Error())
	}))
	testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "1s ") {
		t.Fatalf("retries reported: %q; want one after 1s", seen)
	}
	for _, want := range w.Errors["on retry"] {
		if !strings.Contains(seen[0], want) {
			t.Errorf("retry reported as %q; want %q in it", seen[0], want)
		}
	}
}
