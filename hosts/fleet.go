package hosts

import (
	"context"
	"fmt"
)

// Fleet is the whole of the config's hosts behind one Runner: it resolves
// targets with its Inventory and runs each host's command through Local
// (the local host) or Pool (every SSH host). This is what the bot, the
// agent's tools and the CLI hold.
type Fleet struct {
	Inventory *Inventory
	// Pool runs the SSH hosts; nil when the config has none.
	Pool *Pool
	// Local runs the local host.
	Local *Local
	exec  ExecConfig
	cap   *hostCap
}

var _ Runner = (*Fleet)(nil)

// NewFleet builds the fleet of cfg. Close it when done.
func NewFleet(cfg Config) (*Fleet, error) {
	cfg = cfg.WithDefaults()
	inv, err := NewInventory(cfg)
	if err != nil {
		return nil, err
	}
	f := &Fleet{Inventory: inv, Local: NewLocal(cfg), exec: cfg.Exec, cap: newHostCap(cfg.Exec.MaxPerHost)}
	if len(cfg.Hosts) > 0 {
		if f.Pool, err = NewPool(cfg); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Run runs command on h through the runner for it.
func (f *Fleet) Run(ctx context.Context, h Host, command string, opts Options, onChunk func(Chunk)) (Result, error) {
	release, err := f.cap.acquire(ctx, h.Name)
	if err != nil {
		return Result{Host: h.Name, ExitCode: -1}, err
	}
	defer release()
	switch {
	case h.IsLocal():
		return f.Local.Run(ctx, h, command, opts, onChunk)
	case f.Pool == nil:
		return Result{Host: h.Name, ExitCode: -1}, fmt.Errorf("hosts: %s: no SSH hosts are configured", h.Name)
	}
	return f.Pool.Run(ctx, h, command, opts, onChunk)
}

// RunTarget resolves target (NAME, group:NAME, or a comma list) and runs
// command on each host with RunMany; a zero fan.Limit means
// exec.concurrency. The error is only about resolving the target; each
// host's own outcome is in its HostResult.
func (f *Fleet) RunTarget(ctx context.Context, target, command string, opts Options, fan FanOut) ([]HostResult, error) {
	hosts, err := f.Inventory.Resolve(target)
	if err != nil {
		return nil, err
	}
	if fan.Limit <= 0 {
		fan.Limit = f.exec.Concurrency
	}
	return RunMany(ctx, f, hosts, command, opts, fan), nil
}

// Close closes the SSH connections. Safe to call more than once.
func (f *Fleet) Close() error {
	if f.Pool == nil {
		return nil
	}
	return f.Pool.Close()
}
