package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/web/archive"
)

// The postmortem last posted in a thread is kept, replaced by the next,
// and goes with the web thread past web.retention.
func TestMemoryKeepsTheLastPostmortem(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	s.Web().Save(ctx, archive.Message{ID: "m1", Channel: "ops", Thread: "m1", User: "alice", Message: json.RawMessage(`{"text":"nginx down"}`),
		Finished: true, Seq: 1, Created: clock.Now(), Updated: clock.Now()})
	if _, _, found, err := s.Memory().LastPostmortem(ctx, sess.ID); found || err != nil {
		t.Fatalf("before any: found %v, %v", found, err)
	}
	for _, md := range []string{"# Postmortem: first\n", "# Postmortem: second\n"} {
		if err := s.Memory().SavePostmortem(ctx, sess.ID, md); err != nil {
			t.Fatal(err)
		}
	}
	md, at, found, err := s.Memory().LastPostmortem(ctx, sess.ID)
	if md != "# Postmortem: second\n" || !at.Equal(clock.Now().Truncate(time.Millisecond)) || !found || err != nil {
		t.Errorf("last = %q at %v, %v, %v; want the second", md, at, found, err)
	}
	if err := s.Web().DeleteThreads(ctx, []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, found, _ := s.Memory().LastPostmortem(ctx, sess.ID); found {
		t.Errorf("a postmortem outlived its web thread's retention")
	}
}
