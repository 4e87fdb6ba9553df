package agent

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// Metrics are the agent's Prometheus collectors: its model requests and
// the commands its Guard decides on. A nil *Metrics records nothing.
//
// Labels are few and fixed: a provider's kind, a policy decision, a
// result. No model text, command text, host or user is a label.
type Metrics struct {
	modelRequests *prometheus.CounterVec
	modelLatency  *prometheus.HistogramVec
	modelTokens   *prometheus.CounterVec
	commands      *prometheus.CounterVec
	commandTime   *prometheus.HistogramVec
}

// NewMetrics registers the collectors on reg:
//
//   - opsbot_model_requests_total{provider,result}: model calls, result
//     ok, error or cancelled;
//   - opsbot_model_request_duration_seconds{provider}: from the request
//     to the end of its streamed response;
//   - opsbot_model_tokens_total{provider,direction}: tokens in (prompt)
//     and out (completion), as the provider reported them;
//   - opsbot_commands_total{decision,result}: commands by the policy's
//     decision (allow, approve, deny) and how each ended (ok, failed,
//     timeout, cancelled, error: it could not run; refused: denied by
//     policy; not_approved: people denied it or let it expire);
//   - opsbot_command_duration_seconds{decision}: how long the commands
//     that ran took, per host.
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
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_commands_total",
			Help: "Commands by the policy's decision (allow, approve, deny) and result (ok, failed, timeout, cancelled, error, refused, not_approved)."},
			[]string{"decision", "result"}),
		commandTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opsbot_command_duration_seconds",
			Help:    "How long a command that ran took on one host, by the policy's decision.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}}, []string{"decision"}),
	}
	for _, c := range []prometheus.Collector{m.modelRequests, m.modelLatency, m.modelTokens, m.commands, m.commandTime} {
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

// Executor wraps e so that each host's run of a command is counted: as
// decision "approve" when a person approved it (Confinement.Approved),
// else "allow". On a nil *Metrics it returns e.
func (m *Metrics) Executor(e hosts.Executor) hosts.Executor {
	if m == nil || e == nil {
		return e
	}
	return meteredExecutor{Executor: e, m: m}
}

// meteredExecutor is the Executor Metrics.Executor returns.
type meteredExecutor struct {
	hosts.Executor
	m *Metrics
}

var _ hosts.Executor = meteredExecutor{}

// Exec runs the command and counts each host's result.
func (e meteredExecutor) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	decision := policy.Allow.String()
	if opts.Approved {
		decision = policy.Approve.String()
	}
	results := e.Executor.Exec(ctx, names, command, opts)
	for _, r := range results {
		e.m.commands.WithLabelValues(decision, commandResult(ctx, r)).Inc()
		if r.Err == nil {
			e.m.commandTime.WithLabelValues(decision).Observe(r.Duration.Seconds())
		}
	}
	return results
}

// commandResult names how one host's run ended.
func commandResult(ctx context.Context, r hosts.ExecResult) string {
	switch {
	case ctx.Err() != nil || errors.Is(r.Err, context.Canceled):
		return "cancelled"
	case r.Err != nil:
		return "error"
	case r.Killed:
		return "timeout"
	case r.ExitCode != 0 || r.Signal != "":
		return "failed"
	}
	return "ok"
}

// Refused counts a command that did not run: the policy denied it
// ("deny", "refused"), or people did not approve it ("approve",
// "not_approved"). It is the Guard's approvals.RefusalCounter.
func (m *Metrics) Refused(decision policy.Action, result string) {
	if m == nil {
		return
	}
	m.commands.WithLabelValues(decision.String(), result).Inc()
}
