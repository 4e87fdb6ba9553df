package anthropic

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/conformance"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// testKey is the API key the tests use; no error may contain it.
const testKey = "sk-ant-api03-TESTKEY-do-not-leak-0123456789"

// echo is an error body of the Messages API that quotes the key back.
func echo(typ string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"key ` + testKey + ` is not valid here"}}`
}

// wire is the Messages API as the conformance suite plays it.
var wire = conformance.Wire{
	Key: testKey,
	// The error body the fake sends for a request it has no reply scripted for.
	NoReply: `{"type":"error","error":{"type":"api_error","message":"no reply scripted"}}`,
	New:     func(cfg Config, opts ...Option) (agent.Provider, error) { return New(cfg, opts...) },
	BaseURL: func(url string) string { return url },
	Model:   "claude-test-1",
	Env:     provider.Environment{KeyVar: "ANTHROPIC_API_KEY", BaseURLVar: "ANTHROPIC_BASE_URL", Model: DefaultModel},
	Path:    "/v1/messages",
	Fields:  []string{"model", "max_tokens", "stream", "system", "messages", "tools"},
	SentKey: sentKey,
	BadHistory: []conformance.BadHistoryCase{
		{Name: "bad block", Req: agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: "image"}}}}}, Want: `unknown block type "image"`}},
	OverloadedStatus: 529,
	ToolCallID:       "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
	TwoCallIDs:       [2]string{"toolu_01WebUptime7Hx3kQ2", "toolu_01ListHosts9Lw2mZ"},
	CutMidText:       5, CutBeforeText: 2, HoldAfterFirst: 4,
	BrokenInput: func(sse string) string { return strings.Replace(sse, `" -h\"}"`, `" -h"`, 1) },
	AtLength: func(sse string) string {
		return strings.Replace(sse, `"stop_reason":"tool_use"`, `"stop_reason":"max_tokens"`, 1)
	},
	ErrorAfterText: "overloaded_after_text.sse",
	Errors: map[string][]string{
		"overloaded four times":  {"anthropic: the API is overloaded", "4 attempts", "try again in a few minutes"},
		"429 asking for an hour": {"rate limited", "asks to wait 1h0m0s", "50,000 input tokens per minute"},
		"error after text":       {"the response was cut off", "overloaded"},
		"401":                    {"the API key was refused (401 authentication_error): set agent.api_key or ANTHROPIC_API_KEY"},
		"404 model":              {`model "claude-test-1" or the endpoint was not found (404 not_found_error)`, "model: claude-sonnet-9-9", "set agent.model (or OPSBOT_MODEL)"},
		"400 context too long":   {"the conversation is too long for the model", "215336 tokens", "start a new conversation or compact"},
		"on retry":               {"anthropic: the API is overloaded"},
	},
	Echo: func(kind string) string {
		return echo(map[string]string{"auth": "authentication_error", "permission": "permission_error", "not_found": "not_found_error",
			"invalid": "invalid_request_error", "rate_limit": "rate_limit_error", "server": "api_error"}[kind])
	},
	ErrorAfterTextEcho: func() []byte {
		return []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
			"event: error\ndata: " + echo("invalid_request_error") + "\n\n")
	},
	ExtraLeaks: []conformance.LeakCase{{Name: "413", Replies: []testfake.Reply{{Status: 413, Body: echo("request_too_large")}}}},
}

// TestConformance: the Messages API passes what every provider must.
func TestConformance(t *testing.T) { conformance.Suite(t, wire) }

// TestEnvironmentFallback: an empty Config takes key, base URL and model
// from ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and OPSBOT_MODEL, else
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
