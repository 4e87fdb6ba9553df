package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Feedback clicks are kept with their turn and counted per UTC day;
// a value other than good or bad is refused.
func TestFeedbackByDay(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	since := clock.Now()
	for _, v := range []string{"good", "good", "bad"} {
		if err := s.RecordFeedback(ctx, Feedback{Platform: "slack", TurnID: "t1", UserID: "U1", Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(24 * time.Hour)
	if err := s.RecordFeedback(ctx, Feedback{Platform: "slack", TurnID: "t2", UserID: "U2", Value: "bad"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordFeedback(ctx, Feedback{Platform: "slack", TurnID: "t2", UserID: "U2", Value: "meh"}); err == nil {
		t.Error("a feedback value other than good or bad was kept")
	}
	got, err := s.FeedbackByDay(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	want := []FeedbackDay{{Day: "2026-11-22", Good: 2, Bad: 1}, {Day: "2026-11-23", Bad: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("feedback by day %+v; want %+v", got, want)
	}
}
