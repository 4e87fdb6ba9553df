package openai

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
	echo := func(typ, code string) string {
		return `{"error":{"message":"key ` + testKey + ` is not valid here","type":"` + typ + `","param":null,"code":"` + code + `"}}`
	}
	streamErr := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
		"data: " + echo("server_error", "") + "\n\n"
	tests := []struct {
		name    string
		replies []reply
	}{
		{"401", []reply{{status: 401, body: echo("invalid_request_error", "invalid_api_key")}}},
		{"403", []reply{{status: 403, body: echo("invalid_request_error", "")}}},
		{"404", []reply{{status: 404, body: echo("invalid_request_error", "model_not_found")}}},
		{"400", []reply{{status: 400, body: echo("invalid_request_error", "")}}},
		{"400 too long", []reply{{status: 400, body: echo("invalid_request_error", "context_length_exceeded")}}},
		{"429 quota", []reply{{status: 429, body: echo("insufficient_quota", "insufficient_quota")}}},
		{"429 long wait", []reply{{status: 429, header: map[string]string{"Retry-After": "900"}, body: echo("tokens", "rate_limit_exceeded")}}},
		{"500 four times", []reply{{status: 500, body: echo("server_error", "")}, {status: 500, body: echo("server_error", "")}, {status: 500, body: echo("server_error", "")}, {status: 500, body: echo("server_error", "")}}},
		{"bare string", []reply{{status: 400, body: `{"error":"bad key ` + testKey + `"}`}}},
		{"not JSON", []reply{{status: 502, body: testKey}, {status: 502, body: testKey}, {status: 502, body: testKey}, {status: 502, body: testKey}}},
		{"error chunk after text", []reply{{raw: []byte(streamErr)}}},
		{"disconnect", []reply{{sse: "text.sse", cutAfter: 3}}},
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
