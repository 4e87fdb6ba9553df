package bot

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// A click of an answer's feedback buttons is kept with its turn, counted,
// and answered to the clicker alone; a value that is not good or bad is
// neither.
func TestFeedbackClickIsRecordedAndThankedPrivately(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	c := clicks{feedbacks: st, metrics: m}
	for _, v := range []string{"good:Ev1", "bad:Ev2", "meh:Ev3"} {
		c.click(ctx, connectors.Event{Kind: connectors.EventAction, Platform: "slack", User: connectors.User{ID: "U1"},
			ActionID: connectors.ActionFeedback, Value: v,
			Respond: func(_ context.Context, text string) error { said = append(said, text); return nil }})
	}
	days, err := st.FeedbackByDay(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].Good != 1 || days[0].Bad != 1 {
		t.Errorf("feedback on record %+v; want one good and one bad", days)
	}
	if len(said) != 2 {
		t.Errorf("the clicker was answered %d times (%q); want 2, privately", len(said), said)
	}
	if got := testutil.ToFloat64(m.feedback.WithLabelValues("slack", "good")); got != 1 {
		t.Errorf("opsbot_feedback_total{slack,good} = %v; want 1", got)
	}
}
