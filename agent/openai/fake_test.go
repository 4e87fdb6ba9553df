package openai

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/conformance"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// testKey is the API key the tests use; no error may contain it.
const testKey = "sk-proj-TESTKEY-do-not-leak-0123456789abcd"

// echo is an error body of the chat completions API that quotes the key
// back.
func echo(typ, code string) string {
	return `{"error":{"message":"key ` + testKey + ` is not valid here","type":"` + typ + `","param":null,"code":"` + code + `"}}`
}

// wire is the chat completions API as the conformance suite plays it.
var wire = conformance.Wire{
	Key: testKey,
	// The error body the fake sends for a request it has no reply scripted for.
	NoReply: `{"error":{"message":"no reply scripted","type":"server_error"}}`,
	New:     func(cfg Config, opts ...Option) (agent.Provider, error) { return New(cfg, opts...) },
	BaseURL: func(url string) string { return url + "/v1" },
	Model:   "gpt-test-1",
	Env:     provider.Environment{KeyVar: "OPENAI_API_KEY", BaseURLVar: "OPENAI_BASE_URL", Model: DefaultModel},
	Path:    "/v1/chat/completions",
	Fields:  []string{"model", "max_tokens", "stream", "stream_options", "messages", "tools"},
	SentKey: bearer,
	BadHistory: []conformance.BadHistoryCase{
		{Name: "tool_use from the user", Req: agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockToolUse}}}}},
			Want: `block type "tool_use" in a user message`},
		{Name: "bad tool input, a string", Req: agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Content: []agent.Block{
			{Type: agent.BlockToolUse, ID: "t1", Name: "x", Input: json.RawMessage(`"x"`)}}}}}, Want: "not a JSON object"}},
	OverloadedStatus: 503,
	ToolCallID:       "call_DdmO9pD3xa9XTPNJ32zg2hcA",
	TwoCallIDs:       [2]string{"call_wEbUptIme7Hx3kQ2aa", "call_LisTHosts9Lw2mZbb"},
	CutMidText:       3, CutBeforeText: 1, HoldAfterFirst: 2,
	BrokenInput: func(sse string) string { return strings.Replace(sse, `"and\": \"df -h\"}"`, `"and\": \"df -h"`, 1) },
	AtLength: func(sse string) string {
		return strings.Replace(sse, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`, 1)
	},
	ErrorAfterText: "error_after_text.sse",
	Errors: map[string][]string{
		"overloaded four times":  {"openai: the server is overloaded (503 server_error, 4 attempts)", "try again in a few minutes"},
		"429 asking for an hour": {"rate limited", "asks to wait 1h0m0s", "Limit 30000"},
		"error after text":       {"the response was cut off: the server failed (server_error)", "Sorry about that"},
		"401":                    {"the API key was refused (401 invalid_api_key): set agent.api_key or OPENAI_API_KEY"},
		"404 model":              {`model "gpt-test-1" or the endpoint was not found (404 model_not_found)`, "gpt-9-turbo", "set agent.model (or OPSBOT_MODEL)"},
		"400 context too long":   {"the conversation is too long for the model (400 context_length_exceeded)", "130532 tokens", "start a new conversation or compact"},
		"on retry":               {"openai: the server is overloaded"},
	},
	Echo: func(kind string) string {
		typ, code, _ := strings.Cut(map[string]string{"auth": "invalid_request_error/invalid_api_key", "permission": "invalid_request_error/",
			"not_found": "invalid_request_error/model_not_found", "invalid": "invalid_request_error/", "rate_limit": "tokens/rate_limit_exceeded",
			"server": "server_error/"}[kind], "/")
		return echo(typ, code)
	},
	ErrorAfterTextEcho: func() []byte {
		return []byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
			"data: " + echo("server_error", "") + "\n\n")
	},
	ExtraLeaks: []conformance.LeakCase{
		{Name: "400 too long", Replies: []testfake.Reply{{Status: 400, Body: echo("invalid_request_error", "context_length_exceeded")}}},
		{Name: "429 quota", Replies: []testfake.Reply{{Status: 429, Body: echo("insufficient_quota", "insufficient_quota")}}},
		{Name: "bare string", Replies: []testfake.Reply{{Status: 400, Body: `{"error":"bad key ` + testKey + `"}`}}},
	},
}

// TestConformance: the chat completions API passes what every provider
// must.
func TestConformance(t *testing.T) { conformance.Suite(t, wire) }

// TestEnvironmentFallback: an empty Config takes key, base URL and model
// from OPENAI_API_KEY, OPENAI_BASE_URL and OPSBOT_MODEL, else
// DefaultModel.
func TestEnvironmentFallback(t *testing.T) { conformance.Environment(t, wire) }

// newFake starts a fake of the API that answers with replies, in order.
func newFake(t testing.TB, replies ...testfake.Reply) *testfake.Server {
	return wire.Fake(t, replies...)
}

// newTestProvider builds a provider against f with a recording sleep.
func newTestProvider(t testing.TB, f *testfake.Server, opts ...Option) (*Provider, *testfake.Sleeps) {
	p, s := wire.Provider(t, f, opts...)
	return p.(*Provider), s
}

// bearer is the key a request carried as its bearer token.
func bearer(h http.Header) string {
	if k, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok {
		return k
	}
	return ""
}
