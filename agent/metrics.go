package agent

import (
	"context"
	"iter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the agent's Prometheus collectors of its model requests
// (agent/tools' Metrics count the commands). A nil *Metrics records
// nothing.
//
// Labels are few and fixed: a provider's kind and a result. No model
// text or user is a label.
type Metrics struct {
	modelRequests *prometheus.CounterVec
	modelLatency  *prometheus.HistogramVec
	modelTokens   *prometheus.CounterVec
	llmTokens     *prometheus.CounterVec
}

// NewMetrics registers the collectors on reg:
//
//   - opsbot_model_requests_total{provider,result}: model calls, result
//     ok, error or cancelled;
//   - opsbot_model_request_duration_seconds{provider}: from the request
//     to the end of its streamed response;
//   - opsbot_model_tokens_total{provider,direction}: tokens in (prompt)
//     and out (completion), as the provider reported them;
//   - opsbot_llm_tokens_total{kind}: the same tokens by kind, what the
//     token budgets count: input (prompt tokens not read from the cache),
//     cached (read from the provider's prompt cache) and output.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		modelRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_model_requests_total",
			Help: "Model calls, by provider and result (ok, error, cancelled)."}, []string{"provider", "result"}),
		modelLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opsbot_model_request_duration_seconds",
			Help:    "Time from a model call to the end of its streamed response, by provider.",
			Buckets: []float64{.25, .5, 1, 2, 4, 8, 15, 30, 60, 120, 300}}, []string{"provider"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_model_tokens_total",
			Help: "Tokens the provider reported, by provider and direction (in: prompt, out: completion)."},
			[]string{"provider", "direction"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_llm_tokens_total",
			Help: "Tokens the model providers reported, by kind: input (not from the prompt cache), cached (read from it), output."},
			[]string{"kind"}),
	}
	for _, kind := range []string{"input", "cached", "output"} {
		m.llmTokens.WithLabelValues(kind) // every kind shows 0, not nothing
	}
	for _, c := range []prometheus.Collector{m.modelRequests, m.modelLatency, m.modelTokens, m.llmTokens} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Provider wraps p so that each of its responses is counted under name
// (the provider's kind: "anthropic", "openai-compatible"). On a nil
// *Metrics it returns p.
func (m *Metrics) Provider(name string, p Provider) Provider {
	if m == nil || p == nil {
		return p
	}
	for _, l := range []string{"ok", "error", "cancelled"} {
		m.modelRequests.WithLabelValues(name, l) // every result shows 0, not nothing
	}
	return ProviderFunc(func(ctx context.Context, req Request) iter.Seq[StreamEvent] {
		return m.meter(ctx, name, p.Stream(ctx, req))
	})
}

// meter passes a response's events on and records how it went once the
// consumer stops pulling.
func (m *Metrics) meter(ctx context.Context, name string, events iter.Seq[StreamEvent]) iter.Seq[StreamEvent] {
	return func(yield func(StreamEvent) bool) {
		start := time.Now()
		var usage Usage
		result := "ok"
		defer func() {
			if ctx.Err() != nil {
				result = "cancelled"
			}
			m.modelRequests.WithLabelValues(name, result).Inc()
			m.modelLatency.WithLabelValues(name).Observe(time.Since(start).Seconds())
			m.modelTokens.WithLabelValues(name, "in").Add(float64(usage.InputTokens))
			m.modelTokens.WithLabelValues(name, "out").Add(float64(usage.OutputTokens))
			m.llmTokens.WithLabelValues("input").Add(float64(max(usage.InputTokens-usage.CachedTokens, 0)))
			m.llmTokens.WithLabelValues("cached").Add(float64(usage.CachedTokens))
			m.llmTokens.WithLabelValues("output").Add(float64(usage.OutputTokens))
		}()
		for ev := range events {
			switch ev.Kind {
			case EventUsage:
				usage = ev.Usage // the last one wins
			case EventError:
				result = "error"
			}
			if !yield(ev) {
				return
			}
		}
	}
}
