package connectors

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// APIMetrics counts the calls connectors make to their platforms' HTTP
// APIs. A connector does not use it directly: it makes its platform
// client's requests through Transport, which the composition root
// (cmd/opsbot) builds and hands to it. A nil *APIMetrics counts nothing,
// so a connector built without metrics (a test, a benchmark) needs no
// special case.
//
// How a connector uses it (Slack over slack-go, Discord over discordgo):
//
//	// cmd/opsbot, once per process:
//	api, err := connectors.NewAPIMetrics(reg)
//	// the Slack connector's Config carries an *http.Client:
//	hc := &http.Client{Transport: api.Transport("slack", connectors.LastPathSegment, nil)}
//	client := slack.New(token, slack.OptionHTTPClient(hc))
//	// the Discord connector sets discordgo's client:
//	session.Client = &http.Client{Transport: api.Transport("discord", connectors.RouteWithoutIDs, nil)}
//
// The series (labels have low cardinality: the method is what the namer
// makes of the request, never a user, channel or message id):
//
//   - opsbot_platform_api_requests_total{platform,method,status}: calls
//     answered, status being the HTTP status code, or "error" when no
//     answer came (connection refused, timeout, cancelled);
//   - opsbot_platform_api_rate_limited_total{platform,method}: answers
//     429 Too Many Requests (the budget was overspent);
//   - opsbot_platform_api_request_duration_seconds{platform}: time to
//     the response's headers.
type APIMetrics struct {
	requests *prometheus.CounterVec
	limited  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewAPIMetrics registers the platform API collectors on reg.
func NewAPIMetrics(reg prometheus.Registerer) (*APIMetrics, error) {
	m := &APIMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_platform_api_requests_total",
			Help: "Calls to a chat platform's HTTP API, by platform, API method and HTTP status (error: no answer)."},
			[]string{"platform", "method", "status"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_platform_api_rate_limited_total",
			Help: "Answers 429 Too Many Requests from a chat platform's HTTP API, by platform and API method."},
			[]string{"platform", "method"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opsbot_platform_api_request_duration_seconds",
			Help:    "Time from a chat platform API call to its response's headers, by platform.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
			[]string{"platform"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.limited, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// MethodNamer names the API method a request calls, for a label: it must
// return one of a small, fixed set of names (Slack's "chat.update", a
// Discord route with its ids collapsed), never anything taken from a
// user, a channel or a message.
type MethodNamer func(*http.Request) string

// Transport returns next wrapped so that each request is counted under
// platform, its method named by name. next nil means
// http.DefaultTransport. On a nil *APIMetrics it returns next (or
// http.DefaultTransport) unchanged.
func (m *APIMetrics) Transport(platform string, name MethodNamer, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if m == nil {
		return next
	}
	return &countingTransport{m: m, platform: platform, name: name, next: next}
}

// countingTransport is the http.RoundTripper Transport returns.
type countingTransport struct {
	m        *APIMetrics
	platform string
	name     MethodNamer
	next     http.RoundTripper
}

var _ http.RoundTripper = (*countingTransport)(nil)

// RoundTrip passes req on and counts what came back.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := t.name(req)
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	t.m.duration.WithLabelValues(t.platform).Observe(time.Since(start).Seconds())
	status := "error"
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			t.m.limited.WithLabelValues(t.platform, method).Inc()
		}
	}
	t.m.requests.WithLabelValues(t.platform, method, status).Inc()
	return resp, err
}

// LastPathSegment names a request by the last segment of its URL path:
// Slack's Web API puts the method there (https://slack.com/api/chat.update
// → "chat.update").
func LastPathSegment(r *http.Request) string {
	p := strings.TrimSuffix(r.URL.Path, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// RouteWithoutIDs names a request by its HTTP method and URL path with
// every id collapsed to ":id", Discord's routes being the model:
// PATCH /api/v10/channels/123/messages/456 → "PATCH /channels/:id/messages/:id".
// The "/api" and version prefix is dropped. A segment is an id when it
// holds a digit (snowflakes, interaction and webhook tokens, percent-encoded
// emoji) or is longer than 32 characters; the version ("v10") is not one.
func RouteWithoutIDs(r *http.Request) string {
	segs := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	if len(segs) > 0 && segs[0] == "api" {
		segs = segs[1:]
	}
	if len(segs) > 0 && apiVersion.MatchString(segs[0]) {
		segs = segs[1:]
	}
	for i, s := range segs {
		if len(s) > 32 || strings.ContainsAny(s, "0123456789") {
			segs[i] = ":id"
		}
	}
	return r.Method + " /" + strings.Join(segs, "/")
}

var apiVersion = regexp.MustCompile(`^v[0-9]+$`)
