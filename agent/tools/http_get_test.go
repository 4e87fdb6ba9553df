package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// http_get fetches from a destination policy.egress_allow lists, in the
// sandbox, and shows the status, the headers and the body; a redirect is
// shown, not followed.
func TestHTTPGetFetchesAnAllowedDestination(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			http.Redirect(w, r, "http://example.com/", http.StatusFound)
			return
		}
		w.Header().Set("X-Probe", "seen")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("upstream down\n"))
	}))
	defer srv.Close()
	ap := &fakeApprover{}
	tool := &HTTPGet{Guard: realGuard(t, ap, strings.TrimPrefix(srv.URL, "http://"))}
	res := tool.Call(context.Background(), call("http_get", jsonInput("url", srv.URL+"/health?x=1&y=[2]")))
	for _, want := range []string{"HTTP/1.1 503 Service Unavailable", "X-Probe: seen", "upstream down"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("missing %q in %q", want, res.Content)
		}
	}
	res = tool.Call(context.Background(), call("http_get", jsonInput("url", srv.URL+"/elsewhere")))
	if !strings.Contains(res.Content, "302 Found") || !strings.Contains(res.Content, "Location: http://example.com/") {
		t.Errorf("redirect: %q", res.Content)
	}
	if len(ap.request) != 0 {
		t.Errorf("http_get asked people: %+v", ap.request)
	}
}

// A destination the policy does not allow, or a URL that is not http, is
// refused at once: no card, nothing fetched.
func TestHTTPGetRefusesOtherDestinations(t *testing.T) {
	t.Parallel()
	var hit atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit.Store(true) }))
	defer srv.Close()
	ap := &fakeApprover{}
	tool := &HTTPGet{Guard: realGuard(t, ap)}
	for _, u := range []string{srv.URL + "/", "file:///etc/passwd", "http://user:pw@example.com/", "-K /etc/passwd", "gopher://example.com/"} {
		res := tool.Call(context.Background(), call("http_get", jsonInput("url", u)))
		if !res.IsError || strings.Contains(res.Content, "root:") {
			t.Errorf("%s: %q; want a refusal", u, res.Content)
		}
	}
	if hit.Load() || len(ap.request) != 0 {
		t.Errorf("fetched %v, asked %d times; want neither", hit.Load(), len(ap.request))
	}
}
