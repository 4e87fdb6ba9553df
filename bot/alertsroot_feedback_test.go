package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store"
)

// An alert's summary takes feedback once its investigation is done, and
// not before: a vote on a summary still being written means nothing.
func TestAlertSummaryTakesFeedbackWhenDone(t *testing.T) {
	g := &store.AlertGroup{Source: "am", Key: strings.Repeat(`{}:{alertname="NodeDown"}`, 40), Status: "firing"}
	s := &groupState{Title: "NodeDown"}
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	s.Investigation.Status = statusRunning
	if m := rootMessage(g, s, now); m.Feedback != "" {
		t.Errorf("a running investigation's summary offers feedback %q", m.Feedback)
	}
	s.Investigation.Status = statusDone
	m := rootMessage(g, s, now)
	if !strings.HasPrefix(m.Feedback, "alert:") || len(m.Feedback) > 40 {
		t.Errorf("a done investigation's summary has feedback %q; want a short alert: name", m.Feedback)
	}
	other := *g
	other.Key += "x"
	if rootMessage(&other, s, now).Feedback == m.Feedback {
		t.Error("two alert groups share one feedback name")
	}
}
