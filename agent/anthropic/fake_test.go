package anthropic

import (
	"testing"

	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// testKey is the API key the tests use; no error may contain it.
const testKey = "sk-ant-api03-TESTKEY-do-not-leak-0123456789"

// noReply is the error body, in the Messages API's wire format, the fake sends for a
// request it has no reply scripted for.
const noReply = `{"type":"error","error":{"type":"api_error","message":"no reply scripted"}}`

// newFake starts a fake of the API that answers with replies, in order.
func newFake(t testing.TB, replies ...testfake.Reply) *testfake.Server {
	return testfake.NewServer(t, noReply, replies...)
}

// newTestProvider builds a provider against f with a recording sleep.
func newTestProvider(t testing.TB, f *testfake.Server, opts ...Option) (*Provider, *testfake.Sleeps) {
	t.Helper()
	s := &testfake.Sleeps{}
	opts = append([]Option{WithSleep(s.Sleep)}, opts...)
	p, err := New(Config{APIKey: testKey, BaseURL: f.URL, Model: "claude-test-1", MaxTokens: 1024}, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, s
}
