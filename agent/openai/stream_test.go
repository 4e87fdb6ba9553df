package openai

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/conformance"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// TestStream plays what only OpenAI-compatible servers answer; the rest is
// TestConformance's.
func TestStream(t *testing.T) {
	t.Parallel()
	body := func(name string) string { return string(testfake.ReadTestdata(t, name)) }
	html502 := testfake.Reply{Status: 502, Body: "<html>502</html>"}
	conformance.Run(t, wire, []conformance.Case{
		{Name: "compatible server: no id, one chunk, finish_reason stop, no usage", Replies: []testfake.Reply{{SSE: "compat_tool_call.sse"}},
			Calls: []conformance.Call{{ID: "call_0", Name: "run_command", Input: `{"target":"local","command":"df -h"}`}},
			Stop:  agent.StopToolUse, NoUsage: true, Requests: 1},
		{Name: "429 insufficient_quota: waiting does not help", Replies: []testfake.Reply{{Status: 429, Body: body("insufficient_quota.json")}},
			Err: []string{"openai: the account is out of quota (429 insufficient_quota)", "check its plan and billing"}, Requests: 1},
		{Name: "clean end without finish_reason after text: an error",
			Replies: []testfake.Reply{{Raw: []byte(strings.Join(strings.SplitAfter(body("text.sse"), "\n\n")[:3], "") + "data: [DONE]\n\n")}},
			Text:    "The root filesystem on local",
			Err:     []string{"closed the stream before the answer was complete", "text so far is kept"}, Requests: 1},
		{Name: "404 model on Ollama", Replies: []testfake.Reply{{Status: 404, Body: body("ollama_not_found.json")}},
			Err: []string{"not found (404 api_error)", `model "llama9" not found, try pulling it first`}, Requests: 1},
		{Name: "a proxy's HTML 502, four times", Replies: []testfake.Reply{html502, html502, html502, html502},
			Err:      []string{"openai: the server failed (502, 4 attempts): try again later"},
			Requests: 4, Waits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{Name: "a bare string error body", Replies: []testfake.Reply{{Status: 400, Body: `{"error":"invalid tool schema for run_command"}`}},
			Err: []string{"the server rejected the request (400)", "invalid tool schema for run_command"}, Requests: 1},
	})
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
