package hosts

import (
	"context"
	"fmt"
)

// Hooks for the external tests of this package.

// ShellQuote exposes shellQuote.
var ShellQuote = shellQuote

// RemoteCommand exposes remoteCommand, unsandboxed.
func RemoteCommand(command string, o Options, token string) string {
	return remoteCommand(command, o, token, false)
}

// SandboxedCommand exposes remoteCommand inside bubblewrap.
func SandboxedCommand(command string, o Options, token string) string {
	return remoteCommand(command, o, token, true)
}

// NewCapture exposes the output capture: write to w, then read the kept
// output, the truncated flag and the bytes held in memory.
func NewCapture(limit int) (w interface{ Write([]byte) (int, error) }, result func() ([]byte, bool, int)) {
	c := newCapture(limit)
	return c, func() ([]byte, bool, int) { return c.bytes(), c.truncated(), c.retained() }
}

// SetAfterStart makes f run in every Run of p once the host has answered
// the exec request, before the command's end is awaited: a reply that
// reaches the bot late. f gets the pid the wrapper printed (that of the
// command's timeout(1)), which it waits for first.
func SetAfterStart(p *Pool, f func(pid int)) {
	p.afterStart = func(r *remoteRun) {
		<-r.pid.seen
		f(int(r.pid.pid.Load()))
	}
}

// WaitConnected blocks until p has n open connections, woken by each
// connection that opens or closes; it fails when ctx ends first.
func WaitConnected(ctx context.Context, p *Pool, n int) error {
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if got := p.Connected(); got == n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d open connections, want %d: %w", p.Connected(), n, context.Cause(ctx))
		}
	}
}

// LocalProcess exposes localProcess: what the local runner records of a
// command's process group.
var LocalProcess = localProcess
