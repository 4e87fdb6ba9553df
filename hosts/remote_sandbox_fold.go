package hosts

import (
	"bytes"
	"context"
	"io"

	"golang.org/x/crypto/ssh"
)

// Why the probe is folded into the first command: on a cold fan-out a
// probe of its own is a second SSH session and a second bubblewrap start
// per host, which doubled the cost of the fan-out (docs/BENCHMARKS.md,
// "The SSH-host sandbox"). So while a connection's sandbox is unknown,
// an unapproved command runs under bubblewrap as always, with a marker
// printed from inside the sandbox before the command starts
// (markedCommand):
//   - the marker seen: bubblewrap works there; that is recorded for the
//     connection, as a probe's success would be, and the run is the
//     command's own;
//   - no marker: the command never started (bubblewrap, or the wrapper
//     before it, failed), and nothing it printed is passed on yet; the
//     real probe then says why: if bubblewrap works, the failure was the
//     command's own (a missing directory) and its output is released;
//     if not, the host is recorded as having no bubblewrap and the
//     command is refused (NoSandboxError) or, where the host's mode
//     allows it (readonly_user, best_effort, a scheduled check), run
//     again unconfined as it would have been had the host been probed.
//
// Nothing ever runs unconfined on a host whose sandbox is unknown. Only a
// command without network folds: its bubblewrap options are the probe's,
// so its success proves what the probe would (with a network destination
// the options differ, and the probe runs first as before).

// foldable says whether the unapproved command of opts may carry the probe.
func foldable(c *conn, opts Options) bool {
	return c.known() == nil && len(opts.Sandbox.ConnectPorts) == 0
}

// known is what the current connection's probe (or a marked run) found;
// nil while unknown.
func (c *conn) known() *bwrapProbe {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.probed
}

// record keeps pr as what the connection cl has, unless cl is no longer
// the connection or its sandbox is known already.
func (c *conn) record(cl *ssh.Client, pr bwrapProbe) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == cl && c.probed == nil {
		c.probed = &pr
	}
}

// foldedRun ends a marked run r (markedCommand) that ended with res: see
// the comment at the top of this file.
func (p *Pool) foldedRun(ctx context.Context, r *remoteRun, res Result, out *sink, command string, onChunk func(Chunk)) (Result, error) {
	if r.boxw.found {
		r.conn.record(r.client, bwrapProbe{ok: true})
		return res, nil
	}
	if r.boxw.overflow { // the marker was not found in the first lines: nothing is known
		return res, nil
	}
	pr, err := r.conn.bwrap(ctx)
	if err != nil {
		return res, err
	}
	if pr.ok {
		r.boxw.release()
		out.fill(&res)
		return res, nil
	}
	h := r.conn.host
	box, err := p.confineAs(h, pr, r.opts)
	if err != nil {
		return res, err
	}
	res, _, err = p.runSession(ctx, r.conn, h, command, r.opts, box, false, onChunk)
	return res, err
}

// maxBoxScan bounds the output held while looking for the marker.
const maxBoxScan = 64 << 10

// boxWriter holds a stream back until the marker line of a marked run,
// removes that line and passes the rest on. Lines before it (a noisy
// login shell) pass on with it; held without it, they are the wrapper's
// or bubblewrap's complaint, passed on only by release.
type boxWriter struct {
	w        io.Writer
	marker   []byte
	held     []byte
	found    bool
	overflow bool // more than maxBoxScan before any marker: passed on
}

func newBoxWriter(w io.Writer, token string) *boxWriter {
	return &boxWriter{w: w, marker: []byte(boxMarker(token))}
}

func (b *boxWriter) Write(p []byte) (int, error) {
	if b.found || b.overflow {
		return b.w.Write(p)
	}
	n := len(p)
	start := len(b.held)
	b.held = append(b.held, p...)
	if i := bytes.LastIndexByte(b.held[:start], '\n'); i >= 0 {
		start = i + 1
	} else {
		start = 0
	}
	for start < len(b.held) {
		end := bytes.IndexByte(b.held[start:], '\n')
		if end < 0 {
			break
		}
		end += start + 1
		if bytes.Equal(bytes.TrimRight(b.held[start:end], "\r\n"), b.marker) {
			b.found = true
			return n, b.pass(append(b.held[:start:start], b.held[end:]...))
		}
		start = end
	}
	if len(b.held) > maxBoxScan {
		b.overflow = true
		return n, b.pass(b.held)
	}
	return n, nil
}

// pass writes out what was held, and holds nothing more.
func (b *boxWriter) pass(p []byte) error {
	b.held = nil
	if len(p) == 0 {
		return nil
	}
	_, err := b.w.Write(p)
	return err
}

// release passes on what is held: the run's own output after all.
func (b *boxWriter) release() { _ = b.pass(b.held) }
