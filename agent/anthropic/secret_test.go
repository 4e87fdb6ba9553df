package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"
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
		replies []reply
	}{
		{"401", []reply{{status: 401, body: echo("authentication_error")}}},
		{"403", []reply{{status: 403, body: echo("permission_error")}}},
		{"404", []reply{{status: 404, body: echo("not_found_error")}}},
		{"400", []reply{{status: 400, body: echo("invalid_request_error")}}},
		{"413", []reply{{status: 413, body: echo("request_too_large")}}},
		{"429 long wait", []reply{{status: 429, header: map[string]string{"Retry-After": "900"}, body: echo("rate_limit_error")}}},
		{"500 four times", []reply{{status: 500, body: echo("api_error")}, {status: 500, body: echo("api_error")}, {status: 500, body: echo("api_error")}, {status: 500, body: echo("api_error")}}},
		{"not JSON", []reply{{status: 502, body: "<html>bad gateway " + testKey + "</html>"}, {status: 502, body: testKey}, {status: 502, body: testKey}, {status: 502, body: testKey}}},
		{"error event after text", []reply{{raw: []byte(streamErr)}}},
		{"disconnect", []reply{{sse: "text.sse", cutAfter: 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.replies...)
			p, _ := newTestProvider(t, f)
			o := collect(t, p.Stream(context.Background(), testRequest()))
			if o.err == nil {
				t.Fatal("no error")
			}
			for err := o.err; err != nil; err = errors.Unwrap(err) {
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error contains the API key: %q", err)
				}
			}
		})
	}
}
