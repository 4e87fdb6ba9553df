package hosts

import (
	"context"
	"sync"
)

// HostResult is one host's outcome in a fan-out.
type HostResult struct {
	Host   Host
	Result Result
	// Err is Run's error: the host could not be reached, or its command's
	// end is unknown. See Runner.
	Err error
}

// FanOut says how RunMany spreads a command over hosts.
type FanOut struct {
	// Limit is how many hosts run at once (default exec.concurrency's
	// default, 64).
	Limit int
	// OnChunk receives every host's output as it arrives (Chunk.Host tells
	// them apart). Calls never overlap.
	OnChunk func(Chunk)
	// OnResult receives each host's result as soon as that host is done,
	// in completion order. Calls never overlap.
	OnResult func(HostResult)
}

// RunMany runs command on every host through r, at most f.Limit at once,
// and returns when all are done, with the results in the order of hosts.
// Cancelling ctx cancels the running commands and fails the hosts not yet
// started.
func RunMany(ctx context.Context, r Runner, hosts []Host, command string, opts Options, f FanOut) []HostResult {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	var mu sync.Mutex // serialises the callbacks
	onChunk := f.OnChunk
	if onChunk != nil {
		onChunk = func(c Chunk) { mu.Lock(); defer mu.Unlock(); f.OnChunk(c) }
	}
	results := make([]HostResult, len(hosts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(limit, len(hosts)) { // a bounded pool of workers
		wg.Go(func() {
			for i := range next {
				results[i] = runOne(ctx, r, hosts[i], command, opts, onChunk)
				if f.OnResult != nil {
					mu.Lock()
					f.OnResult(results[i])
					mu.Unlock()
				}
			}
		})
	}
	for i := range hosts {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// runOne runs the command on h, unless ctx has already ended.
func runOne(ctx context.Context, r Runner, h Host, command string, opts Options, onChunk func(Chunk)) HostResult {
	if ctx.Err() != nil {
		return HostResult{Host: h, Result: Result{Host: h.Name, ExitCode: -1}, Err: context.Cause(ctx)}
	}
	res, err := r.Run(ctx, h, command, opts, onChunk)
	return HostResult{Host: h, Result: res, Err: err}
}
