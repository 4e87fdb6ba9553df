package store

import (
	"context"
	"testing"
)

// A queued notice is kept on its open event, read back with it at the
// next start, and not written to an event already handed to its work.
func TestQueuedNoticeIsKeptOnItsOpenEvent(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	a, _, _ := s.Inbox().RecordEvent(ctx, "web", "", []byte(`{"Text":"one"}`))
	b, _, _ := s.Inbox().RecordEvent(ctx, "web", "", []byte(`{"Text":"two"}`))
	if err := s.Inbox().FinishEvent(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{a, b} {
		if err := s.Inbox().KeepQueuedNotice(ctx, id, []byte(`{"ID":"m1"}`)); err != nil {
			t.Fatal(err)
		}
	}
	open, err := s.Inbox().OpenEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || string(open[0].QueuedNotice) != `{"ID":"m1"}` {
		t.Fatalf("open events %+v; want event %d with its notice", open, a)
	}
	var kept int
	if err := s.read.QueryRow(`SELECT count(*) FROM inbox WHERE queued_notice IS NOT NULL`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != 1 {
		t.Errorf("%d rows keep a notice; want only the open one", kept)
	}
}
