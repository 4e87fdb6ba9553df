package checks

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the health checks' Prometheus collectors. A nil *Metrics
// records nothing.
type Metrics struct {
	runs     *prometheus.CounterVec
	failures *prometheus.CounterVec
	lastRun  *prometheus.GaugeVec
}

// NewMetrics registers the collectors on reg:
//
//   - opsbot_check_runs_total{schedule}: runs committed;
//   - opsbot_check_failures_total{check}: results judged fail or unreachable;
//   - opsbot_check_last_run_timestamp_seconds{schedule}: when the last
//     run was committed (alert when it grows old: the schedule is stuck).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_check_runs_total",
			Help: "Health-check runs committed to the store, by schedule."}, []string{"schedule"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_check_failures_total",
			Help: "Health-check results judged fail or unreachable, by check."}, []string{"check"}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opsbot_check_last_run_timestamp_seconds",
			Help: "Unix time the schedule's last run was committed."}, []string{"schedule"}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.failures, m.lastRun} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe records a committed run.
func (m *Metrics) observe(rep Report, ended time.Time) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(rep.Schedule).Inc()
	m.lastRun.WithLabelValues(rep.Schedule).Set(float64(ended.UnixMilli()) / 1000)
	for _, c := range rep.Checks {
		m.failures.WithLabelValues(c).Add(0) // a check that never failed shows 0, not nothing
	}
	for _, r := range rep.Results {
		if r.Status.bad() {
			m.failures.WithLabelValues(r.Check).Inc()
		}
	}
}
