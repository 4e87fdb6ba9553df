package main

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/opsbot/opsbot/hosts"
)

// fenceGate holds the check every side effect passes first: nil outside
// ha, the leadership's Fence in it (haRole.attach).
type fenceGate struct {
	check atomic.Pointer[func() error]
	sync  atomic.Pointer[func(context.Context) error]
}

func (g *fenceGate) set(fn func() error) { g.check.Store(&fn) }

// replicateWith has every command wait, before it runs, until fn has
// copied what this process recorded off its machine (store/replica).
func (g *fenceGate) replicateWith(fn func(context.Context) error) { g.sync.Store(&fn) }

// replicate copies what this process recorded off its machine, and
// returns once it is there; nil at once without replication.
func (g *fenceGate) replicate(ctx context.Context) error {
	if fn := g.sync.Load(); fn != nil {
		return (*fn)(ctx)
	}
	return nil
}

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

// runner runs commands through r only while the gate is open: the
// scheduled health checks, which do not pass the executor.
func (g *fenceGate) runner(r hosts.Runner) hosts.Runner {
	return hosts.RunnerFunc(func(ctx context.Context, h hosts.Host, command string, opts hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
		if err := g.err(); err != nil {
			return hosts.Result{ExitCode: -1}, err
		}
		return r.Run(ctx, h, command, opts, onChunk)
	})
}

// fencedExecutor refuses every command, on every host, while this
// process does not hold a fresh leadership lease: a deposed leader runs
// nothing its successor might run again.
type fencedExecutor struct {
	gate *fenceGate
	hosts.Executor
}

var _ hosts.Executor = fencedExecutor{}

// errNotReplicated is a refused command's result while the replica
// cannot be brought up to date (haRole.attach logs why).
var errNotReplicated = errors.New("not run: opsbot could not copy its records to its replica first, so another opsbot taking over would not know it ran; try again in a minute (opsbot's log says what failed)")

// Exec runs command unless the fence is closed, or what this process
// recorded (an approval used, above all) cannot be copied off its
// machine first; then each host's result says why it did not run.
func (f fencedExecutor) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	err := f.gate.err()
	if err == nil {
		if f.gate.replicate(ctx) != nil {
			err = errNotReplicated
		} else {
			// The sync may have outlasted the lease: asked again, so a
			// command never starts on a lease older than the renew
			// deadline, whatever the sync took.
			err = f.gate.err()
		}
	}
	if err != nil {
		out := make([]hosts.ExecResult, len(names))
		for i, h := range names {
			out[i] = hosts.ExecResult{Host: h, Err: err}
		}
		return out
	}
	return f.Executor.Exec(ctx, names, command, opts)
}
