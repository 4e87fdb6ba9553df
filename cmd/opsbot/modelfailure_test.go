package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// failingModel is a model API that answers every call with one error, as
// the real APIs word them: status, headers and a JSON body in the
// provider's own shape.
type failingModel struct {
	status int
	header map[string]string
	body   string
	calls  atomic.Int32
}

func (m *failingModel) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		for k, v := range m.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(m.status)
		fmt.Fprint(w, m.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// anthropicError and openaiError are each API's error body.
func anthropicError(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

func openaiError(typ, msg string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":null}}`, msg, typ)
}

// TestModelFailuresSayWhatHappened: a failed answer shows the model API's
// own reason and the advice that fits it, on both wire formats: a rate
// limit that asks for a long wait says so and does not say "ask again";
// an overload and a server fault say to try later. Each keeps an id for
// the operator's log.
func TestModelFailuresSayWhatHappened(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, provider string
		model          *failingModel
		want           []string
	}{
		{"anthropic rate limit", "anthropic", &failingModel{status: 429, header: map[string]string{"Retry-After": "600"}, body: anthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")},
			[]string{"rate limited", "it asks to wait 10m0s", "wait and try again"}},
		{"openai rate limit", "openai", &failingModel{status: 429, header: map[string]string{"Retry-After": "600"}, body: openaiError("requests", "Rate limit reached for requests")},
			[]string{"rate limit", "10m0s"}},
		{"anthropic overloaded", "anthropic", &failingModel{status: 529, header: map[string]string{"Retry-After": "0"}, body: anthropicError("overloaded_error", "Overloaded")},
			[]string{"overloaded", "try again in a few minutes"}},
		{"openai server error", "openai", &failingModel{status: 500, header: map[string]string{"Retry-After": "0"}, body: openaiError("server_error", "The server had an error while processing your request")},
			[]string{"500", "try again later"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
				"agent:\n  provider: %s\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n",
				filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), tt.provider, tt.model.serve(t))
			base, _ := startBotYAML(t, dir, yaml)
			thread := postMessage(t, base, "@opsbot why is the disk on web-1 full?")
			awaitInThread(t, base, thread, "the answer failed")
			shown := threadTexts(t, base, thread)
			for _, w := range append(tt.want, "error id ") {
				if !strings.Contains(shown, w) {
					t.Errorf("the failure lacks %q:\n%s", w, shown)
				}
			}
			if strings.Contains(shown, "ask again") {
				t.Errorf("a model API's failure says to ask again:\n%s", shown)
			}
			if strings.Contains(shown, "127.0.0.1") || strings.Contains(shown, "test-key") {
				t.Errorf("the failure shows an address or the key:\n%s", shown)
			}
		})
	}
}
