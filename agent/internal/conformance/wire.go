package conformance

import (
	"net/http"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// Wire is one provider under the suite: how to build it against the
// fake, and what differs from one wire format to the other. Its testdata
// holds the same recorded answers under the same names (text.sse,
// tool_call.sse, two_tool_calls.sse, overloaded.sse, overloaded.json,
// rate_limit.json, unauthorized.json, not_found.json, too_long.json).
type Wire struct {
	// Key is the API key the provider is built with; no error may carry it.
	Key string
	// NoReply is the error body, in the wire's format, the fake sends for
	// a request it has no reply scripted for.
	NoReply string
	// New is the provider's New.
	New func(cfg provider.Config, opts ...provider.Option) (agent.Provider, error)
	// BaseURL is the provider's base URL for the fake at url.
	BaseURL func(url string) string
	// Model is the model the suite's providers ask for.
	Model string
	// Env is where the provider's Config falls back to, DefaultModel
	// included.
	Env provider.Environment
	// Path is where the provider sends its calls; Fields, the fields of
	// its request, which request.golden.json holds for
	// testfake.Conversation(); SentKey, the key a request carried.
	Path    string
	Fields  []string
	SentKey func(http.Header) string
	// OverloadedStatus is the status an overloaded API answers (529, 503).
	OverloadedStatus int
	// ToolCallID is tool_call.sse's call id; TwoCallIDs two_tool_calls.sse's.
	ToolCallID string
	TwoCallIDs [2]string
	// CutMidText is how many events of text.sse make its first two deltas;
	// CutBeforeText, how many come before the first; HoldAfterFirst, how
	// many make its first delta.
	CutMidText, CutBeforeText, HoldAfterFirst int
	// BrokenInput is tool_call.sse with its call's input cut short, so that
	// it is not JSON; AtLength is a response whose stop reason is replaced
	// by the length bound's.
	BrokenInput, AtLength func(sse string) string
	// ErrorAfterText names the recorded stream that fails after the text
	// "The root filesystem".
	ErrorAfterText string
	// Errors are the words the error of each failing case must contain,
	// by the case's name: "overloaded four times", "429 asking for an
	// hour", "error after text", "401", "404 model", "400 context too
	// long", and "on retry" (the worded error of an overloaded.sse retry).
	Errors map[string][]string
	// Echo is an error body of the wire that quotes the key back, for a
	// failure of kind auth, permission, not_found, invalid, rate_limit or
	// server; ErrorAfterTextEcho, a stream that fails so after some text.
	Echo               func(kind string) string
	ErrorAfterTextEcho func() []byte
	// BadHistory are the malformed requests only w refuses.
	BadHistory []BadHistoryCase
	// ExtraLeaks are the failures only w's API has, whose errors must be
	// free of the key too.
	ExtraLeaks []LeakCase
}

// Fake starts a fake of w's API that answers with replies, in order.
func (w Wire) Fake(t testfake.T, replies ...testfake.Reply) *testfake.Server {
	return testfake.NewServer(t, w.NoReply, replies...)
}

// Provider builds w's provider against f with a recording sleep, then
// opts.
func (w Wire) Provider(t testfake.T, f *testfake.Server, opts ...provider.Option) (agent.Provider, *testfake.Sleeps) {
	t.Helper()
	s := &testfake.Sleeps{}
	p, err := w.New(w.config(f), append([]provider.Option{provider.WithSleep(s.Sleep)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, s
}

// config is what the suite builds a provider with: the test key and
// model, against f.
func (w Wire) config(f *testfake.Server) provider.Config {
	return provider.Config{APIKey: w.Key, BaseURL: w.BaseURL(f.URL), Model: w.Model, MaxTokens: 1024}
}
