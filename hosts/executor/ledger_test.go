package executor

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// A fan-out's workers record their commands together: while one commit
// is under way the others queue, and the next commit takes them all;
// each Started returns only once its own row is committed, with its own
// id, and the ends are forgotten likewise.
func TestProcessLedgerGroupCommitsConcurrentStarts(t *testing.T) {
	t.Parallel()
	st := &batchLedger{release: make(chan struct{})}
	l := NewProcessLedger(st, slog.New(slog.DiscardHandler))
	const n = 20
	dones := make(chan func(), n)
	start := func(i int) {
		go func() {
			done, _ := l.Started(context.Background(), hosts.Process{Host: fmt.Sprintf("web-%d", i)})
			dones <- done
		}()
	}
	start(0)
	waitQueuedLedger(t, l, 0) // the first is committing, alone
	for i := 1; i < n; i++ {
		start(i)
	}
	waitQueuedLedger(t, l, n-1) // the others queue behind it
	close(st.release)
	var ends []func()
	for range n {
		ends = append(ends, <-dones)
	}
	st.mu.Lock()
	batches := slices.Clone(st.batches)
	st.mu.Unlock()
	if !slices.Equal(batches, []int{1, n - 1}) {
		t.Errorf("commits of %v rows; want [1 %d]", batches, n-1)
	}
	var wg sync.WaitGroup
	for _, done := range ends {
		wg.Go(done)
	}
	wg.Wait()
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.running) != 0 || st.removes == 0 || st.removes > n {
		t.Errorf("after every end: %d still recorded, %d remove commits; want none left, in at most %d", len(st.running), st.removes, n)
	}
}

// waitQueuedLedger waits until a commit is under way and n Started calls
// queue behind it.
func waitQueuedLedger(t *testing.T, l *ProcessLedger, n int) {
	t.Helper()
	give := time.Now().Add(time.Minute)
	for {
		l.add.mu.Lock()
		queued, busy := len(l.add.queued), l.add.busy
		l.add.mu.Unlock()
		if busy && queued == n {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("%d Started calls queued behind the first after a minute; want %d", queued, n)
		}
		runtime.Gosched() // the callers are starting: no event says they have queued
	}
}

// batchLedger is a BatchLedgerStore in memory; its first commit waits
// for release.
type batchLedger struct {
	release chan struct{}
	mu      sync.Mutex
	next    int64
	running map[int64]string
	batches []int
	removes int
}

func (b *batchLedger) AddRunning(ctx context.Context, r Running) (int64, error) {
	ids, err := b.AddRunningBatch(ctx, []Running{r})
	return ids[0], err
}

func (b *batchLedger) RemoveRunning(ctx context.Context, id int64) error {
	return b.RemoveRunningBatch(ctx, []int64{id})
}

func (b *batchLedger) AddRunningBatch(_ context.Context, rs []Running) ([]int64, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running == nil {
		b.running = map[int64]string{}
	}
	b.batches = append(b.batches, len(rs))
	ids := make([]int64, len(rs))
	for i, r := range rs {
		b.next++
		ids[i], b.running[b.next] = b.next, r.Host
	}
	return ids, nil
}

func (b *batchLedger) RemoveRunningBatch(_ context.Context, ids []int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removes++
	for _, id := range ids {
		if _, ok := b.running[id]; !ok {
			return fmt.Errorf("id %d was never recorded", id)
		}
		delete(b.running, id)
	}
	return nil
}
