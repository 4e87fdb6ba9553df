package hosts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// Tuning of how a cancelled remote command is stopped.
const (
	// pidWait is how long a command cancelled at once may take to print
	// the pid its kill needs.
	pidWait = 2 * time.Second
	// killSessionTimeout bounds the second session that kills the
	// command's process group by pid.
	killSessionTimeout = 5 * time.Second
	// lostGrace is how long past its deadline (plus the kill delay) the
	// bot waits for a command's end before calling the connection lost.
	lostGrace = 10 * time.Second
)

// Run runs command on the SSH host h; see Runner for the contract and
// remoteCommand for how the command is wrapped on the host.
func (p *Pool) Run(ctx context.Context, h Host, command string, opts Options, onChunk func(Chunk)) (Result, error) {
	res := Result{Host: h.Name, ExitCode: -1}
	opts = opts.withDefaults(p.exec)
	if err := opts.validate(); err != nil {
		return res, fmt.Errorf("hosts: %s: %w", h.Name, err)
	}
	c, err := p.conn(h, p.userFor(h, opts.Sandbox != nil))
	if err != nil {
		return res, fmt.Errorf("hosts: %s: %w", h.Name, err)
	}
	if err := c.acquire(ctx); err != nil {
		return res, fmt.Errorf("hosts: %s: waiting for a session: %w", h.Name, err)
	}
	defer c.release()
	box, fold := false, false
	if opts.Sandbox != nil { // no person approved it: the host's sandbox holds it
		if box, fold, err = p.confinement(ctx, c, h, opts); err != nil {
			return res, fmt.Errorf("hosts: %s: %w", h.Name, err)
		}
	}
	res, err = p.runOn(ctx, c, h, command, opts, box, fold, onChunk)
	if err != nil {
		return res, fmt.Errorf("hosts: %s: %w", h.Name, err)
	}
	return res, nil
}

// runOn runs command on a new session of c (in bubblewrap with box;
// marked, carrying the probe, with fold: see foldedRun).
func (p *Pool) runOn(ctx context.Context, c *conn, h Host, command string, opts Options, box, fold bool, onChunk func(Chunk)) (Result, error) {
	res, r, err := p.runSession(ctx, c, h, command, opts, box, fold, onChunk)
	if !fold {
		return res, err
	}
	if err != nil { // cancelled or lost: the marker still proves the sandbox, if it came
		if r != nil && r.boxw != nil && r.boxw.found {
			c.record(r.client, bwrapProbe{ok: true})
		}
		return res, err
	}
	return p.foldedRun(ctx, r, res, r.out, command, onChunk)
}

// runSession runs command on a new session of c, and returns the run.
func (p *Pool) runSession(ctx context.Context, c *conn, h Host, command string, opts Options, box, fold bool, onChunk func(Chunk)) (Result, *remoteRun, error) {
	sess, cl, err := c.session(ctx)
	if err != nil {
		return Result{Host: h.Name, ExitCode: -1}, nil, err
	}
	defer c.done()
	r := &remoteRun{pool: p, conn: c, client: cl, sess: sess, opts: opts, token: newToken(), box: box, mark: fold,
		out: newSink(h.Name, opts.OutputLimit, onChunk)}
	res, err := r.run(ctx, command, r.out)
	res.Host = h.Name
	return res, r, err
}

// remoteRun is one command on one session.
type remoteRun struct {
	pool   *Pool
	conn   *conn
	client *ssh.Client
	sess   *ssh.Session
	opts   Options
	token  string
	box    bool // run inside bubblewrap (remoteCommand)
	mark   bool // and prove it started (markedCommand)
	out    *sink
	pid    *pidWriter
	boxw   *boxWriter // with mark: holds the output back until the marker
}

// run starts the wrapped command and waits for its end, its deadline
// (plus grace) or ctx.
func (r *remoteRun) run(ctx context.Context, command string, out *sink) (Result, error) {
	defer r.sess.Close()
	res := Result{ExitCode: -1}
	// The clock starts before the exec request: the host may start the
	// command (and its timeout(1)) before its reply to the request
	// arrives, so a start taken after it would make a command stopped at
	// its deadline look as if it ended before it.
	start := time.Now()
	// Recorded before it starts: the token is all a sweep needs to find
	// the run on the host should this process die (Pool.End).
	done, err := track(ctx, r.pool.Tracker, Process{Host: r.conn.host.Name, Token: r.token, Command: command}, r.opts.Approval)
	defer done()
	if err != nil {
		return res, fmt.Errorf("not started: %w", err)
	}
	if err := r.start(command, out); err != nil {
		return res, err
	}
	if r.pool.afterStart != nil {
		r.pool.afterStart(r)
	}
	waited := make(chan error, 1)
	go func() { waited <- r.sess.Wait() }() // ends with the session: it is closed below at the latest
	end, err := r.await(ctx, waited)
	res.Duration = time.Since(start)
	_ = r.pid.finish()
	out.fill(&res)
	switch end {
	case endCancelled:
		return res, fmt.Errorf("cancelled, command killed: %w", context.Cause(ctx))
	case endFrozen:
		return res, fmt.Errorf("%w: no end at the command's %v deadline and no answer to a keepalive within %v (ssh.connect_timeout); the connection was dropped, and on the host the command stops at its own deadline",
			errFrozen, r.opts.Timeout, r.pool.cfg.ConnectTimeout)
	case endLost:
		r.conn.drop(r.client)
		return res, fmt.Errorf("no end %v past the %v deadline: connection presumed lost, command killed", killAfter+lostGrace, r.opts.Timeout)
	}
	return r.outcome(res, err)
}

// How the wait for a command ended.
type ending int

const (
	endExited    ending = iota // the session ended: the command's own end
	endCancelled               // ctx ended first: the command was stopped
	endFrozen                  // at the deadline, the host answered nothing
	endLost                    // the host answers, but the command never ends
)

// await waits for the command's end, or ctx, until the command's deadline.
// There the command's timeout(1) stops it on the host, so its end is due:
// a host that does not even answer a keepalive then has stopped answering
// (a frozen host or sshd, a connection the network dropped unseen), and
// the command fails at once instead of waiting for a grace that only a
// live host needs (killAfter + lostGrace, or the pool's keepalive, 30 s).
func (r *remoteRun) await(ctx context.Context, waited <-chan error) (ending, error) {
	deadline := time.NewTimer(r.opts.Timeout)
	defer deadline.Stop()
	select {
	case err := <-waited:
		return endExited, err
	case <-ctx.Done():
		return endCancelled, r.stop(waited)
	case <-deadline.C:
	}
	alive, err, ended := r.answering(waited)
	switch {
	case ended:
		return endExited, err
	case !alive:
		r.conn.drop(r.client) // ends the session, and so the wait
		<-waited
		return endFrozen, nil
	}
	guard := time.NewTimer(killAfter + lostGrace)
	defer guard.Stop()
	select {
	case err := <-waited:
		return endExited, err
	case <-ctx.Done():
		return endCancelled, r.stop(waited)
	case <-guard.C:
		return endLost, r.stop(waited)
	}
}

// answering sends an OpenSSH keepalive and reports whether the host
// answered within ssh.connect_timeout (a "failure" reply proves it is
// there as well as a success would); the command's end, if it comes
// first, ends the wait.
func (r *remoteRun) answering(waited <-chan error) (alive bool, err error, ended bool) {
	answered := make(chan error, 1)
	go func() { // returns at the latest when the client is closed (dropped)
		_, _, err := r.client.SendRequest("keepalive@openssh.com", true, nil)
		answered <- err
	}()
	t := time.NewTimer(r.pool.cfg.ConnectTimeout)
	defer t.Stop()
	select {
	case err := <-waited:
		return false, err, true
	case err := <-answered:
		return err == nil, nil, false
	case <-t.C:
		return false, nil, false
	}
}

// start requests a pty if wanted and starts the wrapped command.
func (r *remoteRun) start(command string, out *sink) error {
	stdout, stderr := out.writer(Stdout), out.writer(Stderr)
	if r.opts.PTY {
		modes := ssh.TerminalModes{ssh.ECHO: 0}
		if err := r.sess.RequestPty("xterm", 40, 120, modes); err != nil {
			return fmt.Errorf("pty request: %w", err)
		}
		stdout = r.markers(stdout) // the pty merges stderr into stdout
	} else {
		stderr = r.markers(stderr)
	}
	r.sess.Stdout, r.sess.Stderr, r.sess.Stdin = stdout, stderr, r.opts.Stdin
	line := remoteCommand(command, r.opts, r.token, r.box)
	if r.mark {
		line = markedCommand(command, r.opts, r.token)
	}
	if err := r.sess.Start(line); err != nil {
		r.conn.drop(r.client)
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// markers wraps the stream the wrapper prints its pid (and, marked, the
// sandbox's marker) on, to take those lines out.
func (r *remoteRun) markers(w io.Writer) io.Writer {
	if r.mark {
		r.boxw = newBoxWriter(w, r.token)
		w = r.boxw
	}
	r.pid = newPIDWriter(w, r.token)
	return r.pid
}

// outcome turns the session's end into the result.
func (r *remoteRun) outcome(res Result, err error) (Result, error) {
	var exit *ssh.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &exit):
		res.ExitCode, res.Signal = exit.ExitStatus(), exit.Signal()
	default:
		// No exit status: the connection broke under the command.
		r.conn.drop(r.client)
		return res, fmt.Errorf("connection lost while the command ran (it stops at its own deadline): %w", err)
	}
	// timeout(1) exits 124 after stopping the command with SIGTERM, or
	// dies of the SIGKILL it sends 5 s later. A command may exit 124 of
	// its own, so the run must also have lasted the deadline: Duration
	// counts from before the exec request, which the remote timeout(1)
	// follows, so a command stopped at its deadline always has lasted
	// it by our clock. The slack of 1/1000 of the deadline covers two
	// clocks slewed apart by NTP (at most 500 ppm each).
	past := res.Duration >= r.opts.Timeout-r.opts.Timeout/1000
	res.TimedOut = past && (res.ExitCode == 124 || res.Signal == "KILL")
	if res.TimedOut {
		res.ExitCode, res.Signal = 124, ""
	}
	return res, nil
}

// stop kills a running command, with both means at once: the SSH signal
// request (OpenSSH 7.9+ delivers it to the session's process group — but
// not for root logins, which run without privilege separation: "session
// signalling requires privilege separation"), and a second session that
// kills the process group by the pid the wrapper printed. The wrapper's
// deadline stays as the last resort.
func (r *remoteRun) stop(waited <-chan error) error {
	_ = r.sess.Signal(ssh.SIGTERM)
	pid, err, ended := r.awaitPID(waited)
	if ended {
		return err
	}
	_ = r.sess.Close() // frees our session on the server for the kill session
	if pid > 0 {
		r.killGroup(pid)
	}
	t := time.NewTimer(killSessionTimeout)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C: // the server does not even close the channel: drop the connection
		r.conn.drop(r.client)
		return <-waited
	}
}

// awaitPID returns the pid the wrapper printed, waiting for it a little
// when the command was cancelled right after it started; or the
// command's end, if that comes first.
func (r *remoteRun) awaitPID(waited <-chan error) (pid int64, err error, ended bool) {
	t := time.NewTimer(pidWait)
	defer t.Stop()
	select {
	case <-r.pid.seen:
	case err := <-waited:
		return 0, err, true
	case <-t.C:
	}
	return r.pid.pid.Load(), nil, false
}

// killGroup signals the process group pid (and pid itself, should the
// server not have made it a group leader) from a second session. OpenSSH
// keeps counting a closed session until its command has exited, so when
// every session of the connection is busy there is no room for it there:
// the kill then goes over a connection of its own.
func (r *remoteRun) killGroup(pid int64) {
	ctx, cancel := context.WithTimeout(r.pool.ctx, killSessionTimeout)
	defer cancel()
	p := strconv.FormatInt(pid, 10)
	line := "kill -TERM -- -" + p + " 2>/dev/null || kill -TERM " + p + " 2>/dev/null; true"
	s, err := r.conn.newSession(ctx, r.client)
	if err == nil {
		runBounded(ctx, s, line)
		return
	}
	if errors.Is(err, errFrozen) {
		return // the host does not answer: a new connection would wait as long
	}
	cl, err := r.pool.dial(ctx, r.conn.host, r.conn.user)
	if err != nil {
		return
	}
	defer cl.Close()
	if s, err := cl.NewSession(); err == nil {
		runBounded(ctx, s, line)
	}
}

// runBounded runs line on s, giving up (closing s) when ctx ends, and
// returns how the session ended.
func runBounded(ctx context.Context, s *ssh.Session, line string) error {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	defer s.Close()
	return s.Run(line)
}
