package anthropic

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
	echo := func(typ string) string {
		return `{"type":"error","error":{"type":"` + typ + `","message":"key ` + testKey + ` is not valid here"}}`
	}
	streamErr := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: error\ndata: " + echo("invalid_request_error") + "\n\n"
	tests := []struct {
		name    string
		replies []testfake.Reply
	}{
		{"401", []testfake.Reply{{Status: 401, Body: echo("authentication_error")}}},
		{"403", []testfake.Reply{{Status: 403, Body: echo("permission_error")}}},
		{"404", []testfake.Reply{{Status: 404, Body: echo("not_found_error")}}},
		{"400", []testfake.Reply{{Status: 400, Body: echo("invalid_request_error")}}},
		{"413", []testfake.Reply{{Status: 413, Body: echo("request_too_large")}}},
		{"429 long wait", []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "900"}, Body: echo("rate_limit_error")}}},
		{"500 four times", []testfake.Reply{{Status: 500, Body: echo("api_error")}, {Status: 500, Body: echo("api_error")}, {Status: 500, Body: echo("api_error")}, {Status: 500, Body: echo("api_error")}}},
		{"not JSON", []testfake.Reply{{Status: 502, Body: "<html>bad gateway " + testKey + "</html>"}, {Status: 502, Body: testKey}, {Status: 502, Body: testKey}, {Status: 502, Body: testKey}}},
		{"error event after text", []testfake.Reply{{Raw: []byte(streamErr)}}},
		{"disconnect", []testfake.Reply{{SSE: "text.sse", CutAfter: 5}}},
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
