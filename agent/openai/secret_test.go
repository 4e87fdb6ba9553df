package openai

import (
	"context"
	"testing"

	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// TestErrorsNeverContainTheKey: every failure the caller can see is free
// of the API key, even when the server echoes the key back, at every level
// of the error's chain.
func TestErrorsNeverContainTheKey(t *testing.T) {
	t.Parallel()
	echo := func(typ, code string) string {
		return `{"error":{"message":"key ` + testKey + ` is not valid here","type":"` + typ + `","param":null,"code":"` + code + `"}}`
	}
	streamErr := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
		"data: " + echo("server_error", "") + "\n\n"
	tests := []struct {
		name    string
		replies []testfake.Reply
	}{
		{"401", []testfake.Reply{{Status: 401, Body: echo("invalid_request_error", "invalid_api_key")}}},
		{"403", []testfake.Reply{{Status: 403, Body: echo("invalid_request_error", "")}}},
		{"404", []testfake.Reply{{Status: 404, Body: echo("invalid_request_error", "model_not_found")}}},
		{"400", []testfake.Reply{{Status: 400, Body: echo("invalid_request_error", "")}}},
		{"400 too long", []testfake.Reply{{Status: 400, Body: echo("invalid_request_error", "context_length_exceeded")}}},
		{"429 quota", []testfake.Reply{{Status: 429, Body: echo("insufficient_quota", "insufficient_quota")}}},
		{"429 long wait", []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "900"}, Body: echo("tokens", "rate_limit_exceeded")}}},
		{"500 four times", []testfake.Reply{{Status: 500, Body: echo("server_error", "")}, {Status: 500, Body: echo("server_error", "")}, {Status: 500, Body: echo("server_error", "")}, {Status: 500, Body: echo("server_error", "")}}},
		{"bare string", []testfake.Reply{{Status: 400, Body: `{"error":"bad key ` + testKey + `"}`}}},
		{"not JSON", []testfake.Reply{{Status: 502, Body: testKey}, {Status: 502, Body: testKey}, {Status: 502, Body: testKey}, {Status: 502, Body: testKey}}},
		{"error chunk after text", []testfake.Reply{{Raw: []byte(streamErr)}}},
		{"disconnect", []testfake.Reply{{SSE: "text.sse", CutAfter: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.replies...)
			p, _ := newTestProvider(t, f)
			o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
			testfake.AssertNoSecret(t, o.Err, testKey)
		})
	}
}
