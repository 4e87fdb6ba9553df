package alerts

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts deliveries and investigations. A nil *Metrics counts
// nothing.
//
//   - opsbot_alerts_received_total{source}: deliveries recorded (202);
//   - opsbot_alerts_duplicate_total{source}: deliveries already recorded
//     (a sender's retry, by its delivery id), answered 202 and not kept twice;
//   - opsbot_alerts_rejected_total{source,reason}: deliveries refused, by
//     reason: unknown_source, unauthorized, too_large, bad_payload,
//     not_recorded;
//   - opsbot_alerts_investigated_total: investigations started;
//   - opsbot_alerts_queued_total: investigations that waited for a free
//     slot (alerts.max_concurrent);
//   - opsbot_alerts_not_investigated_total{reason}: cooldown, storm.
type Metrics struct {
	received, duplicate, rejected *prometheus.CounterVec
	investigated, queued          prometheus.Counter
	skipped                       *prometheus.CounterVec
}

// NewMetrics registers the alert metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		received:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_alerts_received_total", Help: "Alert deliveries recorded and answered 202."}, []string{"source"}),
		duplicate:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_alerts_duplicate_total", Help: "Alert deliveries already recorded (a sender's retry), not kept twice."}, []string{"source"}),
		rejected:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_alerts_rejected_total", Help: "Alert deliveries refused, by reason."}, []string{"source", "reason"}),
		investigated: prometheus.NewCounter(prometheus.CounterOpts{Name: "opsbot_alerts_investigated_total", Help: "Alert investigations started."}),
		queued:       prometheus.NewCounter(prometheus.CounterOpts{Name: "opsbot_alerts_queued_total", Help: "Alert investigations that waited for a free slot (alerts.max_concurrent)."}),
		skipped:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_alerts_not_investigated_total", Help: "Alert groups routed to an investigation and not investigated, by reason."}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.received, m.duplicate, m.rejected, m.investigated, m.queued, m.skipped} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// The reasons of opsbot_alerts_rejected_total.
const (
	RejectUnknownSource = "unknown_source"
	RejectUnauthorized  = "unauthorized"
	RejectTooLarge      = "too_large"
	RejectBadPayload    = "bad_payload"
	RejectNotRecorded   = "not_recorded"
)

func (m *Metrics) reject(source, reason string) {
	if m != nil {
		m.rejected.WithLabelValues(source, reason).Inc()
	}
}

func (m *Metrics) receive(source string, first bool) {
	switch {
	case m == nil:
	case first:
		m.received.WithLabelValues(source).Inc()
	default:
		m.duplicate.WithLabelValues(source).Inc()
	}
}

// Investigated counts an investigation started.
func (m *Metrics) Investigated() {
	if m != nil {
		m.investigated.Inc()
	}
}

// Queued counts an investigation that waits for a slot.
func (m *Metrics) Queued() {
	if m != nil {
		m.queued.Inc()
	}
}

// NotInvestigated counts a group routed to an investigation that got
// none, and why (cooldown, storm).
func (m *Metrics) NotInvestigated(reason string) {
	if m != nil {
		m.skipped.WithLabelValues(reason).Inc()
	}
}
