package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newTestMetrics(t *testing.T) (*agent.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := agent.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// A turn over a metered provider: two model calls that end well (their
// usage summed), then one whose stream fails, then one cancelled.
func TestMetricsCountModelRequestsByResultWithTokens(t *testing.T) {
	t.Parallel()
	m, reg := newTestMetrics(t)
	failed := func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
		yield(agent.StreamEvent{Kind: agent.EventText, Text: "par"})
		yield(agent.StreamEvent{Kind: agent.EventError, Err: errors.New("overloaded_error")})
	}
	p := m.Provider("anthropic", &testfake.Model{Steps: append([]testfake.Step{
		testfake.Text("a", "b"), testfake.Text("c")}, failed)})
	for range 3 {
		for range p.Stream(context.Background(), agent.Request{}) {
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range p.Stream(ctx, agent.Request{}) {
	}
	want := `
# HELP opsbot_model_requests_total Model calls, by provider and result (ok, error, cancelled).
# TYPE opsbot_model_requests_total counter
opsbot_model_requests_total{provider="anthropic",result="cancelled"} 1
opsbot_model_requests_total{provider="anthropic",result="error"} 1
opsbot_model_requests_total{provider="anthropic",result="ok"} 2
# HELP opsbot_model_tokens_total Tokens the provider reported, by provider and direction (in: prompt, out: completion).
# TYPE opsbot_model_tokens_total counter
opsbot_model_tokens_total{direction="in",provider="anthropic"} 20
opsbot_model_tokens_total{direction="out",provider="anthropic"} 10
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "opsbot_model_requests_total", "opsbot_model_tokens_total"); err != nil {
		t.Error(err)
	}
	if n := testfake.HistogramCount(t, reg, "opsbot_model_request_duration_seconds"); n != 4 {
		t.Errorf("model latency observations = %d, want 4", n)
	}
}

func TestNilMetricsChangeNothing(t *testing.T) {
	t.Parallel()
	var m *agent.Metrics
	p := &testfake.Model{}
	if m.Provider("x", p) != agent.Provider(p) {
		t.Error("nil metrics wrapped the provider")
	}
}
