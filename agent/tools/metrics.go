package tools

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// Metrics are the Prometheus collectors of the commands the tools' Guard
// decides on (agent.Metrics counts the model's requests). A nil *Metrics
// records nothing.
//
// Labels are few and fixed: a policy decision and a result. No command
// text, host or user is a label.
type Metrics struct {
	commands    *prometheus.CounterVec
	commandTime *prometheus.HistogramVec
}

var _ approvals.RefusalCounter = (*Metrics)(nil)

// NewMetrics registers the collectors on reg:
//
//   - opsbot_commands_total{decision,result}: commands by the policy's
//     decision (allow, approve, deny) and how each ended (ok, failed,
//     timeout, cancelled, error: it could not run; refused: denied by
//     policy; not_approved: people denied it or let it expire);
//   - opsbot_command_duration_seconds{decision}: how long the commands
//     that ran took, per host.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_commands_total",
			Help: "Commands by the policy's decision (allow, approve, deny) and result (ok, failed, timeout, cancelled, error, refused, not_approved)."},
			[]string{"decision", "result"}),
		commandTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opsbot_command_duration_seconds",
			Help:    "How long a command that ran took on one host, by the policy's decision.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}}, []string{"decision"}),
	}
	for _, c := range []prometheus.Collector{m.commands, m.commandTime} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
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
