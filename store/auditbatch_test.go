package store

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Audit calls made while a commit is under way share the next commit, and
// each returns only once its own row is readable: the writer is held by
// an open transaction while twenty calls arrive; the first then commits
// alone and the other nineteen together (two commits, told apart by the
// clock, which a commit reads once and which moves on every reading).
func TestAuditGroupCommitsConcurrentEntriesTogether(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	var mu sync.Mutex
	tick := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); tick = tick.Add(time.Second); return tick }
	ctx := context.Background()
	hold, err := s.write.BeginTx(ctx, nil) // the one write connection
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Rollback() })
	const n = 20
	errs := make(chan error, n)
	start := func(i int) {
		go func() {
			subject := fmt.Sprintf("host:web-%d", i)
			if err := s.Audit().Audit(ctx, AuditEntry{Actor: "web:alice", Action: "command.start", Subject: subject}); err != nil {
				errs <- err
				return
			}
			trail, err := s.Audit().AuditTrail(ctx, subject)
			if err == nil && len(trail) != 1 {
				err = fmt.Errorf("%s: Audit returned before its row was readable: %+v", subject, trail)
			}
			errs <- err
		}()
	}
	start(0)
	waitQueued(t, s, 0) // the first caller commits alone: it waits for the writer
	for i := 1; i < n; i++ {
		start(i)
	}
	waitQueued(t, s, n-1) // the rest queue behind it
	hold.Rollback()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	commits := map[time.Time]int{}
	trail, err := s.Audit().AuditTrail(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range trail {
		commits[e.At]++
	}
	if len(trail) != n || len(commits) != 2 {
		t.Errorf("%d rows in %d commits (%v); want %d rows in 2 commits", len(trail), len(commits), commits, n)
	}
}

// waitQueued waits until a commit is under way and n Audit calls queue
// behind it.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	give := time.Now().Add(time.Minute)
	for {
		s.audit.group.mu.Lock()
		queued, busy := len(s.audit.group.queued), s.audit.group.busy
		s.audit.group.mu.Unlock()
		if busy && queued == n {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("%d Audit calls queued behind the first after a minute; want %d", queued, n)
		}
		runtime.Gosched() // the callers are starting: no event says they have queued
	}
}

// AuditBatch writes all its entries in one transaction, in order, with
// their own At when given.
func TestAuditBatchAppendsInOrder(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	at := clock.Now().Add(-time.Hour)
	err := s.Audit().AuditBatch(ctx, []AuditEntry{
		{Actor: "web:alice", Action: "command.start", Subject: "host:web-1", Detail: json.RawMessage(`{"command":"uptime"}`)},
		{Actor: "web:alice", Action: "command.start", Subject: "host:web-2", At: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	trail, err := s.Audit().AuditTrail(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(trail) != 2 || trail[0].Subject != "host:web-1" || string(trail[0].Detail) != `{"command":"uptime"}` || !trail[0].At.Equal(clock.Now()) ||
		trail[1].Subject != "host:web-2" || string(trail[1].Detail) != `{}` || !trail[1].At.Equal(at) {
		t.Errorf("trail = %+v", trail)
	}
}
