package store

import (
	"context"
	"testing"
	"time"
)

// The inbox keeps an event until it is handed to its work, once per
// platform event id; a finished event is pruned with the old event ids.
func TestInboxRecordsOnceAndKeepsWhatIsOpen(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	a, first, err := s.Inbox().RecordEvent(ctx, "slack", "Ev1", []byte(`{"Text":"disk"}`))
	if err != nil || !first {
		t.Fatalf("RecordEvent = %d, %v, %v", a, first, err)
	}
	if _, again, err := s.Inbox().RecordEvent(ctx, "slack", "Ev1", []byte(`{"Text":"disk"}`)); err != nil || again {
		t.Fatalf("a retry of Ev1 was recorded again (%v, %v)", again, err)
	}
	b, _, _ := s.Inbox().RecordEvent(ctx, "web", "", []byte(`{"Text":"one"}`))
	c, _, _ := s.Inbox().RecordEvent(ctx, "web", "", []byte(`{"Text":"two"}`))
	if err := s.Inbox().FinishEvent(ctx, b); err != nil {
		t.Fatal(err)
	}
	open, err := s.Inbox().OpenEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 || open[0].ID != a || open[1].ID != c || string(open[1].Event) != `{"Text":"two"}` {
		t.Fatalf("open events %+v, want %d then %d", open, a, c)
	}
	clock.Add(time.Hour)
	if _, err := s.Inbox().ForgetEventsBefore(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.read.QueryRow(`SELECT count(*) FROM inbox`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Errorf("%d inbox rows after pruning, want the 2 still open", rows)
	}
}
