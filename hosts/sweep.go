package hosts

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// sweepTimeout bounds the sweep of one host: a host that does not answer
// keeps its command until that command's own timeout(1) ends it.
const sweepTimeout = 20 * time.Second

// End ends what is left on host h of the run p, started by a process that
// died (a remote command outlives its SSH connection until its deadline),
// and reports whether anything was left. The run is found by its token in
// the command line of its group leader (timeout(1), the group's leader),
// never by pid alone, so a reused pid is never signalled.
func (p *Pool) End(ctx context.Context, h Host, run Process) (ended bool, err error) {
	if !validToken(run.Token) {
		return false, fmt.Errorf("hosts: end a run on %s: no run token recorded", h.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	res, err := p.Run(ctx, h, sweepLine(run.Token), Options{Timeout: sweepTimeout / 2}, nil)
	if err != nil {
		return false, err
	}
	return strings.Contains(string(res.Output), "opsbot-ended"), nil
}

// sweepLine kills the process group of every process whose command line
// holds opsbot-run-TOKEN. The pattern's bracket keeps the sweep's own
// command line (which holds the pattern, not the name) from matching.
func sweepLine(token string) string {
	pattern := "opsbot-run-[" + token[:1] + "]" + token[1:]
	return "for p in $(pgrep -f -- '" + pattern + "'); do kill -KILL -- -$p 2>/dev/null || kill -KILL $p; echo opsbot-ended; done; true"
}

// validToken: the tokens newToken makes, 16 hex digits (what the sweep
// line may hold unquoted).
func validToken(t string) bool {
	if len(t) != 16 {
		return false
	}
	for _, c := range t {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// Track makes t record the commands of both runners (see Tracker).
func (f *Fleet) Track(t Tracker) {
	f.Local.Tracker = t
	if f.Pool != nil {
		f.Pool.Tracker = t
	}
}

// End ends what a dead process left of p (EndLocal on this host,
// Pool.End on an SSH host).
func (f *Fleet) End(ctx context.Context, p Process) (bool, error) {
	if p.Host == LocalHost {
		return EndLocal(p)
	}
	h, ok := f.Inventory.Lookup(p.Host)
	if !ok || f.Pool == nil {
		return false, fmt.Errorf("hosts: %s is no longer in the inventory: its command, if still running, ends at its own deadline", p.Host)
	}
	return f.Pool.End(ctx, h, p)
}
