package bot

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// Metrics are the bot's Prometheus collectors. A nil *Metrics records
// nothing. Labels are few and fixed: a platform (one per connector), an
// event kind, a turn's result; never a user, a channel or a text.
type Metrics struct {
	reg       prometheus.Registerer
	events    *prometheus.CounterVec
	turns     *prometheus.CounterVec
	turnTime  prometheus.Histogram
	streamGap *prometheus.HistogramVec
	feedback  *prometheus.CounterVec
}

// NewMetrics registers the collectors on reg:
//
//   - opsbot_events_total{platform,kind}: events from the connectors,
//     kind message, action, or duplicate (a platform's retry, dropped);
//   - opsbot_turns_total{result}: agent turns, result done, failed or
//     cancelled;
//   - opsbot_turn_duration_seconds: how long a turn took, waits for
//     approval included;
//   - opsbot_feedback_total{platform,value}: what people said with the
//     answers' feedback buttons (good, bad): a click that changes a
//     person's say on an answer, not its repeats;
//   - opsbot_stream_update_gap_seconds{platform}: the time between two
//     visible updates of an answer being written (a post, an edit, an
//     append), what a person watching the thread waits.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reg: reg,
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_events_total",
			Help: "Events from the chat platforms, by platform and kind (message, action, duplicate: a retry dropped)."},
			[]string{"platform", "kind"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_turns_total",
			Help: "Agent turns, by result (done, failed, cancelled)."}, []string{"result"}),
		turnTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "opsbot_turn_duration_seconds",
			Help:    "How long an agent turn took, waits for approval included.",
			Buckets: []float64{1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800}}),
		streamGap: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opsbot_stream_update_gap_seconds",
			Help:    "Time between two visible updates of an answer being written, by platform.",
			Buckets: []float64{.1, .25, .5, 1, 1.5, 2, 3, 5, 10, 30}}, []string{"platform"}),
	}
	m.feedback = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsbot_feedback_total",
		Help: "Feedback said with the answers' buttons, by platform and value (good, bad): a click that changes a person's say on an answer; repeats are not counted."}, []string{"platform", "value"})
	for _, c := range []prometheus.Collector{m.events, m.turns, m.turnTime, m.streamGap, m.feedback} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, r := range []store.TurnStatus{store.TurnDone, store.TurnFailed, store.TurnCancelled} {
		m.turns.WithLabelValues(string(r)) // every result shows 0, not nothing
	}
	return m, nil
}

// Gauge registers opsbot_<name>, a gauge read from value at each scrape:
// the way to show a depth or a count a part keeps (a queue's length).
// value must be cheap and safe to call from any goroutine. On a nil
// *Metrics it does nothing.
func (m *Metrics) Gauge(name, help string, value func() float64) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "opsbot_" + name, Help: help}, value))
}

// event counts one event from a connector.
func (m *Metrics) event(ev connectors.Event, duplicate bool) {
	if m == nil {
		return
	}
	kind := "message"
	switch {
	case duplicate:
		kind = "duplicate"
	case ev.Kind == connectors.EventAction:
		kind = "action"
	}
	m.events.WithLabelValues(ev.Platform, kind).Inc()
}

// turnEnded counts a turn that ended with status after d.
func (m *Metrics) turnEnded(status store.TurnStatus, d time.Duration) {
	if m == nil {
		return
	}
	m.turns.WithLabelValues(string(status)).Inc()
	m.turnTime.Observe(d.Seconds())
}

// gaps is what a Renderer reports its visible updates' gaps to; nil on a
// nil *Metrics.
// feedbackClick counts a click of an answer's feedback buttons.
func (m *Metrics) feedbackClick(platform, value string) {
	if m != nil {
		m.feedback.WithLabelValues(platform, value).Inc()
	}
}

func (m *Metrics) gaps(platform string) func(time.Duration) {
	if m == nil {
		return nil
	}
	h := m.streamGap.WithLabelValues(platform)
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}
