package bot

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// An answer written over 7 s against a platform that takes an edit a
// second: every visible update after the first is one gap, and the gaps
// add up to the time from the first update to the last.
func TestRendererReportsTheGapsBetweenVisibleUpdates(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		m, err := NewMetrics(reg)
		if err != nil {
			t.Fatal(err)
		}
		conn := newFakeConn(slackLike)
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(slackLike.EditsPerMinute), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		r.ObserveGaps(m.gaps("fake"))
		for _, pause := range []time.Duration{0, 2 * time.Second, 500 * time.Millisecond, 4500 * time.Millisecond} {
			time.Sleep(pause)
			r.Write("more ")
			synctest.Wait()
		}
		r.Close(context.Background(), nil)
		reqs := conn.reqs()
		if len(reqs) < 3 {
			t.Fatalf("%d updates; the test needs at least 3", len(reqs))
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var h interface {
			GetSampleCount() uint64
			GetSampleSum() float64
		}
		for _, mf := range mfs {
			if mf.GetName() == "opsbot_stream_update_gap_seconds" {
				h = mf.GetMetric()[0].GetHistogram()
			}
		}
		if h == nil {
			t.Fatal("no opsbot_stream_update_gap_seconds series")
		}
		if n := h.GetSampleCount(); n != uint64(len(reqs)-1) {
			t.Errorf("%d gaps observed for %d updates, want %d", n, len(reqs), len(reqs)-1)
		}
		if sum, want := h.GetSampleSum(), reqs[len(reqs)-1].at.Sub(reqs[0].at).Seconds(); sum != want {
			t.Errorf("gaps add up to %vs, want %vs (first update to last)", sum, want)
		}
	})
}

func TestNilBotMetricsCountNothing(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.event(connectors.Event{Platform: "web"}, false)
	m.turnEnded("done", time.Second)
	if m.gaps("web") != nil {
		t.Error("nil metrics gave a gap observer")
	}
	if err := m.Gauge("queue_depth", "x", func() float64 { return 1 }); err != nil {
		t.Error(err)
	}
}

func TestGaugeRegistersAReadAtScrape(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	depth := 0.0
	if err := m.Gauge("inbox_queue_depth", "Events waiting in the inbox.", func() float64 { return depth }); err != nil {
		t.Fatal(err)
	}
	depth = 7
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "opsbot_inbox_queue_depth" {
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 7 {
				t.Errorf("opsbot_inbox_queue_depth = %v, want 7 (read at scrape)", v)
			}
			return
		}
	}
	t.Error("no opsbot_inbox_queue_depth")
}

// A platform delivers an event twice (Slack retries one it thinks was not
// acknowledged): one message is counted, and one duplicate.
func TestEventsAreCountedOnceWithTheirRetriesApart(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	conn := newFakeConn(slackLike)
	b, stop := startBot(t, t.TempDir(), conn, botOptions{metrics: m})
	defer stop()
	ev := connectors.Event{ID: "Ev1", Kind: connectors.EventMessage, Platform: "fake", Channel: "ops", Thread: "T1",
		User: connectors.User{ID: "alice", Name: "alice"}, Text: "help", Mention: true}
	click := connectors.Event{ID: "Ev2", Kind: connectors.EventAction, Platform: "fake", Channel: "ops", Thread: "T1",
		User: connectors.User{ID: "alice", Name: "alice"}, ActionID: "nothing"}
	b.Handle(context.Background(), click)
	b.Handle(context.Background(), ev)
	b.Handle(context.Background(), ev)
	// The inbox routes in order: once help is answered, the click before
	// it was routed, and the retry after it was dropped where it was
	// recorded (Handle waits for that).
	h := &harness{t: t, conn: conn}
	h.eventually("the answer to help", func() bool {
		for _, m := range conn.thread("T1") {
			if m.msg.Text == helpText {
				return true
			}
		}
		return false
	})
	stop() // and a record still under way has ended
	for kind, want := range map[string]float64{"message": 1, "duplicate": 1, "action": 1} {
		if got := testutil.ToFloat64(m.events.WithLabelValues("fake", kind)); got != want {
			t.Errorf("opsbot_events_total{platform=fake,kind=%s} = %v, want %v", kind, got, want)
		}
	}
}
