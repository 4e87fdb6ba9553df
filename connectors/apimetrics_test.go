package connectors_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/opsbot/opsbot/connectors"
)

// fakeSlackAPI answers chat.postMessage, and chat.update with 429 and
// Retry-After as Slack does when the workspace's Tier 3 budget is spent.
func fakeSlackAPI(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/chat.update" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"ok":false,"error":"ratelimited"}`))
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	resp, err := c.Post(url, "application/x-www-form-urlencoded", strings.NewReader("channel=C1&text=hi"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestAPIMetricsCountsByPlatformMethodStatus(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := connectors.NewAPIMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeSlackAPI(t)
	c := &http.Client{Transport: m.Transport("slack", connectors.LastPathSegment, nil)}
	for range 3 {
		post(t, c, srv.URL+"/api/chat.postMessage")
	}
	if got := post(t, c, srv.URL+"/api/chat.update"); got != http.StatusTooManyRequests {
		t.Fatalf("chat.update answered %d, want the fake's 429 passed through", got)
	}
	want := `
# HELP opsbot_platform_api_rate_limited_total Answers 429 Too Many Requests from a chat platform's HTTP API, by platform and API method.
# TYPE opsbot_platform_api_rate_limited_total counter
opsbot_platform_api_rate_limited_total{method="chat.update",platform="slack"} 1
# HELP opsbot_platform_api_requests_total Calls to a chat platform's HTTP API, by platform, API method and HTTP status (error: no answer).
# TYPE opsbot_platform_api_requests_total counter
opsbot_platform_api_requests_total{method="chat.postMessage",platform="slack",status="200"} 3
opsbot_platform_api_requests_total{method="chat.update",platform="slack",status="429"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"opsbot_platform_api_requests_total", "opsbot_platform_api_rate_limited_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "opsbot_platform_api_request_duration_seconds"); n != 1 {
		t.Errorf("duration histograms: %d series, want 1 (slack)", n)
	}
}

func TestAPIMetricsCountsCallsThatGotNoAnswer(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := connectors.NewAPIMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	c := &http.Client{Transport: m.Transport("discord", connectors.RouteWithoutIDs, nil)}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/api/v10/channels/1/messages", nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a closed server answered")
	}
	if got := requestCount(t, reg, "discord", "POST /channels/:id/messages", "error"); got != 1 {
		t.Errorf("requests{status=error} = %v, want 1", got)
	}
}

// requestCount reads one series of opsbot_platform_api_requests_total.
func requestCount(t *testing.T, reg *prometheus.Registry, platform, method, status string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "opsbot_platform_api_requests_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["platform"] == platform && l["method"] == method && l["status"] == status {
				return s.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series {platform=%q,method=%q,status=%q}", platform, method, status)
	return 0
}

func TestNilAPIMetricsPassesRequestsThrough(t *testing.T) {
	t.Parallel()
	var m *connectors.APIMetrics
	if got := m.Transport("slack", connectors.LastPathSegment, nil); got != http.DefaultTransport {
		t.Errorf("nil metrics wrapped the transport: %T", got)
	}
	srv := fakeSlackAPI(t)
	next := srv.Client().Transport
	if got := m.Transport("slack", connectors.LastPathSegment, next); got != next {
		t.Errorf("nil metrics wrapped the transport: %T", got)
	}
}

func TestMethodNamersKeepCardinalityLow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		namer       connectors.MethodNamer
		verb, url   string
		want        string
		description string
	}{
		{connectors.LastPathSegment, "POST", "https://slack.com/api/chat.update", "chat.update", "Slack method"},
		{connectors.LastPathSegment, "POST", "https://slack.com/api/chat.postMessage/", "chat.postMessage", "trailing slash"},
		{connectors.RouteWithoutIDs, "PATCH", "https://discord.com/api/v10/channels/1180000000000000000/messages/1180000000000000001",
			"PATCH /channels/:id/messages/:id", "snowflakes"},
		{connectors.RouteWithoutIDs, "POST", "https://discord.com/api/v10/interactions/1180000000000000000/aW50ZXJhY3Rpb246MTE4MDAwMDAwMDAwMDAwMDAwMDpUb2tlbg/callback",
			"POST /interactions/:id/:id/callback", "interaction token"},
		{connectors.RouteWithoutIDs, "PATCH", "https://discord.com/api/v10/webhooks/11800000/aW50ZXJhY3Rpb25Ub2tlbkFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFla/messages/@original",
			"PATCH /webhooks/:id/:id/messages/@original", "webhook token without digits, long"},
		{connectors.RouteWithoutIDs, "PUT", "https://discord.com/api/v10/channels/1/messages/2/reactions/%F0%9F%91%8D/@me",
			"PUT /channels/:id/messages/:id/reactions/:id/@me", "percent-encoded emoji"},
		{connectors.RouteWithoutIDs, "GET", "http://127.0.0.1:4000/gateway/bot", "GET /gateway/bot", "no prefix"},
	}
	for _, tt := range tests {
		r, err := http.NewRequest(tt.verb, tt.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tt.namer(r); got != tt.want {
			t.Errorf("%s: %s %s named %q, want %q", tt.description, tt.verb, tt.url, got, tt.want)
		}
	}
}
