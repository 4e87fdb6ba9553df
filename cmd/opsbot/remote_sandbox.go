package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// withRemoteSandbox gives f's SSH hosts policy.remote_sandbox (a host's
// own remote_sandbox still wins), and returns the policy checker that
// turns an allow on a host without a sandbox into approve.
func withRemoteSandbox(cfg policy.PolicyConfig, f *hosts.Fleet, policy *policy.Policy) approvals.FleetPolicy {
	pc := approvals.FleetPolicy{Policy: policy, Inventory: f.Inventory}
	if f.Pool != nil {
		f.Pool.RemoteSandboxMode = cfg.RemoteSandboxMode()
		pc.Sandboxes = f.Pool
	}
	return pc
}

// unaskedSandboxes is the pool as approvals.RemoteSandboxes for a
// decision on a command that no sandbox holds anyway (`hosts exec`, the
// person's own command line): it says a host has no sandbox only when
// that is known already, and never connects to find out
// (hosts.Pool.KnownMissingSandbox).
type unaskedSandboxes struct{ pool *hosts.Pool }

func (u unaskedSandboxes) MissingSandbox(_ context.Context, h hosts.Host) error {
	return u.pool.KnownMissingSandbox(h)
}

// withoutAsking is pc deciding without asking hosts for their sandbox
// (unaskedSandboxes).
func withoutAsking(pc approvals.FleetPolicy, f *hosts.Fleet) approvals.FleetPolicy {
	if f.Pool != nil {
		pc.Sandboxes = unaskedSandboxes{f.Pool}
	}
	return pc
}

// remoteSandboxes is what holds the commands allowed without approval on
// each SSH host (bubblewrap, the readonly_user, or none), as found by a
// probe of every host at start, for the start-up log and /readyz.
type remoteSandboxes struct {
	pool  *hosts.Pool
	hosts []hosts.Host
	stop  context.CancelFunc
	wg    sync.WaitGroup

	mu    sync.Mutex
	found map[string]string // host name → what it has, in words
}

// probeRemoteSandboxes probes every SSH host of f in the background and
// logs, once all have answered (or failed to), one line per kind. Close
// stops it and waits for it.
func probeRemoteSandboxes(f *hosts.Fleet, log *slog.Logger) *remoteSandboxes {
	r := &remoteSandboxes{pool: f.Pool, found: map[string]string{}}
	for _, h := range f.Inventory.Hosts() {
		if !h.IsLocal() {
			r.hosts = append(r.hosts, h)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	if r.pool == nil || len(r.hosts) == 0 {
		return r
	}
	r.wg.Go(func() {
		r.probe(ctx)
		if ctx.Err() == nil {
			r.logStart(log)
		}
	})
	return r
}

// remoteProbeBound bounds the probe of one host at start.
const remoteProbeBound = 30 * time.Second

func (r *remoteSandboxes) probe(ctx context.Context) {
	var wg sync.WaitGroup
	for _, h := range r.hosts {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, remoteProbeBound)
			defer cancel()
			words := describeRemoteSandbox(ctx, r.pool, h)
			r.mu.Lock()
			r.found[h.Name] = words
			r.mu.Unlock()
		})
	}
	wg.Wait()
}

// describeRemoteSandbox asks the pool what h has, in words for an
// operator: "bwrap", "readonly_user", "none (…): …", "unknown (…)".
func describeRemoteSandbox(ctx context.Context, p *hosts.Pool, h hosts.Host) string {
	kind, why, err := p.RemoteSandbox(ctx, h)
	switch {
	case err != nil:
		return "unknown (could not reach the host: " + strings.TrimPrefix(err.Error(), "hosts: "+h.Name+": ") + ")"
	case kind != hosts.RemoteNone:
		return string(kind)
	case p.SandboxMode(h) == hosts.RemoteSandboxBestEffort:
		return "none (bubblewrap: " + why + "): commands the policy allows run there WITHOUT a sandbox (remote_sandbox: best_effort)"
	}
	return "none (bubblewrap: " + why + "): commands the policy allows there wait for approval (remote_sandbox: required); install bubblewrap or set ssh.readonly_user"
}

// lines groups the hosts by what they have: "bwrap: web-1, web-2".
func (r *remoteSandboxes) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	byWords := map[string][]string{}
	for _, h := range r.hosts {
		w, ok := r.found[h.Name]
		if !ok {
			w = "not probed yet"
		}
		byWords[w] = append(byWords[w], h.Name)
	}
	var out []string
	for w, names := range byWords {
		out = append(out, fmt.Sprintf("%s on %s", w, strings.Join(names, ", ")))
	}
	slices.Sort(out)
	return out
}

// status is the remote sandbox's line for /readyz: ok when every SSH host
// has a sandbox. Like the local sandbox, its absence does not make the bot
// unready.
func (r *remoteSandboxes) status() (ok bool, detail string) {
	lines := r.lines()
	if len(lines) == 0 {
		return true, "remote sandbox: no SSH hosts"
	}
	ok = true
	for _, l := range lines {
		ok = ok && !strings.HasPrefix(l, "none") && !strings.HasPrefix(l, "unknown")
	}
	return ok, "remote sandbox: " + strings.Join(lines, "; ")
}

// logStart says once what each SSH host holds unapproved commands with.
func (r *remoteSandboxes) logStart(log *slog.Logger) {
	if ok, detail := r.status(); ok {
		log.Info(detail)
	} else {
		log.Warn(detail)
	}
}

// Close stops the probe and waits for it; safe to call twice.
func (r *remoteSandboxes) Close() {
	r.stop()
	r.wg.Wait()
}
