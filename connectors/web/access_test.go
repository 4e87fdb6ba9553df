package web

import (
	"net/http"
	"net/url"
	"testing"
)

// Clients on this machine need no key; others need it when one is set, and
// are refused when none is. What only looks local is not.
func TestAPIKey(t *testing.T) {
	t.Parallel()
	keyed := unstarted(t, Config{APIKey: "s3cret;="}, nil).Handler()
	open := unstarted(t, Config{}, nil).Handler()
	from := func(addr string) func(*http.Request) { return func(r *http.Request) { r.RemoteAddr = addr } }
	header := func(k, v string) func(*http.Request) { return func(r *http.Request) { r.Header.Set(k, v) } }
	tests := []struct {
		name   string
		h      http.Handler
		mod    []func(*http.Request)
		status int
	}{
		{"local, no key", keyed, nil, 200},
		{"local IPv6, no key", keyed, []func(*http.Request){from("[::1]:5000")}, 200},
		{"remote, no key", keyed, []func(*http.Request){from("10.1.2.3:5000")}, 401},
		{"remote, wrong key", keyed, []func(*http.Request){from("10.1.2.3:5000"), header(HeaderKey, "guess")}, 401},
		{"remote, key", keyed, []func(*http.Request){from("10.1.2.3:5000"), header(HeaderKey, "s3cret;=")}, 200},
		{"remote, key in the page's cookie", keyed, []func(*http.Request){from("10.1.2.3:5000"),
			func(r *http.Request) { r.AddCookie(&http.Cookie{Name: KeyCookie, Value: url.QueryEscape("s3cret;=")}) }}, 200},
		{"remote, no key configured", open, []func(*http.Request){from("10.1.2.3:5000"), header(HeaderKey, "")}, 403},
		{"local proxy forwarding a remote client", keyed, []func(*http.Request){header("X-Forwarded-For", "203.0.113.9")}, 401},
		{"local proxy, Forwarded header", open, []func(*http.Request){header("Forwarded", "for=203.0.113.9")}, 403},
		{"a rebound name (DNS rebinding)", open, []func(*http.Request){func(r *http.Request) { r.Host = "evil.example:8080" }}, 403},
		{"localhost by name", open, []func(*http.Request){func(r *http.Request) { r.Host = "localhost:8080" }}, 200},
		{"another site's page", keyed, []func(*http.Request){header("Origin", "http://evil.example")}, 403},
		{"our own page", keyed, []func(*http.Request){header("Origin", "http://127.0.0.1:8080")}, 200},
	}
	for _, tt := range tests {
		w := call(t, tt.h, "GET", "/api/channels", "", tt.mod...)
		if w.Code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, w.Code, w.Body, tt.status)
		}
	}
	// The page itself holds nothing secret: anyone may load it, and it
	// asks for the key when the API refuses.
	if w := call(t, keyed, "GET", "/", "", from("10.1.2.3:5000")); w.Code != 200 {
		t.Errorf("the page from a remote client: %d", w.Code)
	}
}
