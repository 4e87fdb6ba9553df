package hosts_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// fakeRunner is a hand-written Runner: each host sleeps its index in ms
// and fails if its name says so, while the peak concurrency is counted.
type fakeRunner struct {
	running, peak atomic.Int32
}

func (f *fakeRunner) Run(ctx context.Context, h hosts.Host, cmd string, _ hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	onChunk(hosts.Chunk{Host: h.Name, Stream: hosts.Stdout, Data: []byte(cmd)})
	select {
	case <-time.After(time.Duration(len(h.Name)) * time.Millisecond):
	case <-ctx.Done():
		return hosts.Result{Host: h.Name, ExitCode: -1}, ctx.Err()
	}
	if h.Name == "bad" {
		return hosts.Result{Host: h.Name, ExitCode: -1}, errors.New("unreachable")
	}
	return hosts.Result{Host: h.Name}, nil
}

func TestRunManyLimitsAndDeliversEachResult(t *testing.T) {
	t.Parallel()
	var list []hosts.Host
	for i := range 40 {
		list = append(list, hosts.Host{Name: fmt.Sprintf("h%0*d", i%7+1, i)})
	}
	list = append(list, hosts.Host{Name: "bad"})
	f := &fakeRunner{}
	var mu sync.Mutex
	delivered := map[string]bool{}
	chunks := 0
	results := hosts.RunMany(bg, f, list, "uptime", hosts.Options{}, hosts.FanOut{
		Limit:    5,
		OnChunk:  func(hosts.Chunk) { chunks++ }, // unsynchronised on purpose: calls must not overlap (-race)
		OnResult: func(r hosts.HostResult) { mu.Lock(); delivered[r.Host.Name] = true; mu.Unlock() },
	})
	if p := f.peak.Load(); p > 5 {
		t.Errorf("%d ran at once, limit 5", p)
	}
	if len(delivered) != len(list) || chunks != len(list) {
		t.Errorf("%d results and %d chunks delivered, want %d", len(delivered), chunks, len(list))
	}
	for i, r := range results {
		if r.Host.Name != list[i].Name {
			t.Fatalf("result %d is %s, want %s (input order)", i, r.Host.Name, list[i].Name)
		}
	}
	if last := results[len(results)-1]; last.Err == nil {
		t.Error("the unreachable host has no error")
	}
}

func TestRunManyDeliversAsHostsFinish(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := hosts.RunnerFunc(func(ctx context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		if h.Name == "slow" {
			<-release
		}
		return hosts.Result{Host: h.Name}, nil
	})
	got := make(chan string, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		hosts.RunMany(bg, slow, []hosts.Host{{Name: "slow"}, {Name: "fast"}}, "x", hosts.Options{}, hosts.FanOut{
			OnResult: func(r hosts.HostResult) { got <- r.Host.Name },
		})
	}()
	if first := <-got; first != "fast" {
		t.Errorf("first result %s, want fast while slow still runs", first)
	}
	close(release)
	<-done
}

func TestRunManyCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(bg)
	cancel()
	results := hosts.RunMany(ctx, &fakeRunner{}, []hosts.Host{{Name: "a"}, {Name: "b"}}, "x", hosts.Options{}, hosts.FanOut{Limit: 1})
	for _, r := range results {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", r.Host.Name, r.Err)
		}
	}
}
