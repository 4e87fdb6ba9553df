package main

import (
	"context"
	"sync/atomic"

	"github.com/opsbot/opsbot/hosts"
)

// fenceGate holds the check every side effect passes first: nil outside
// ha, the leadership's Fence in it (haRole.attach).
type fenceGate struct {
	check atomic.Pointer[func() error]
}

func (g *fenceGate) set(fn func() error) { g.check.Store(&fn) }

// err is why a side effect may not run now, or nil.
func (g *fenceGate) err() error {
	if fn := g.check.Load(); fn != nil {
		return (*fn)()
	}
	return nil
}

// executor runs commands through exec only while the gate is open.
func (g *fenceGate) executor(exec hosts.Executor) hosts.Executor {
	return fencedExecutor{gate: g, Executor: exec}
}

// fencedExecutor refuses every command, on every host, while this
// process does not hold a fresh leadership lease: a deposed leader runs
// nothing its successor might run again.
type fencedExecutor struct {
	gate *fenceGate
	hosts.Executor
}

var _ hosts.Executor = fencedExecutor{}

// Exec runs command unless the fence is closed; then each host's result
// says why it did not run.
func (f fencedExecutor) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	if err := f.gate.err(); err != nil {
		out := make([]hosts.ExecResult, len(names))
		for i, h := range names {
			out[i] = hosts.ExecResult{Host: h, Err: err}
		}
		return out
	}
	return f.Executor.Exec(ctx, names, command, opts)
}
