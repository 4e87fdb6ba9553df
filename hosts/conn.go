package hosts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// conn is the pooled connection of one user@host: the client while it is
// open, the dial in flight, and the session slots.
type conn struct {
	pool  *Pool
	host  Host
	user  string
	slots chan struct{} // one token per session running, cap ssh.max_sessions
	// probing is held (cap 1) while the connection is probed for
	// bubblewrap, so concurrent first commands share one probe.
	probing chan struct{}

	mu       sync.Mutex
	client   *ssh.Client
	dialing  *dialCall // the dial in flight, shared by every waiter
	active   int       // sessions open now
	lastUsed time.Time
	probed   *bwrapProbe // what the current client's probe found; nil: not probed yet
}

// dialCall is one dial; done is closed when client or err is set.
type dialCall struct {
	done   chan struct{}
	client *ssh.Client
	err    error
}

// get returns the open client, dialling if there is none. The dial runs
// under the pool's context, not ctx, because every caller waiting for it
// shares it: one caller giving up must not fail the others.
func (c *conn) get(ctx context.Context) (*ssh.Client, error) {
	c.mu.Lock()
	if c.client != nil {
		cl := c.client
		c.mu.Unlock()
		return cl, nil
	}
	call := c.dialing
	if call == nil {
		call = &dialCall{done: make(chan struct{})}
		c.dialing = call
		c.pool.wg.Add(1)
		go c.dial(call)
	}
	c.mu.Unlock()
	select {
	case <-call.done:
		return call.client, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dial runs one dial and, on success, starts the watcher of the client.
func (c *conn) dial(call *dialCall) {
	defer c.pool.wg.Done()
	cl, err := c.pool.dial(c.pool.ctx, c.host, c.user)
	c.mu.Lock()
	c.dialing = nil
	if err == nil && c.pool.ctx.Err() != nil {
		cl.Close()
		cl, err = nil, errors.New("the pool is closed")
	}
	if err == nil {
		c.client, c.lastUsed = cl, time.Now()
		c.pool.wg.Add(1)
		go c.watch(cl)
	}
	call.client, call.err = cl, err
	c.mu.Unlock()
	if err == nil {
		c.pool.connChanged()
	}
	close(call.done)
}

// watch owns an open client: it drops it when it dies, when a keepalive
// gets no answer, when it sits idle past ssh.idle_timeout, or when the
// pool closes.
func (c *conn) watch(cl *ssh.Client) {
	defer c.pool.wg.Done()
	dead := make(chan struct{})
	go func() { _ = cl.Wait(); close(dead) }() // ends when cl is closed, below at the latest
	defer func() { c.drop(cl); <-dead }()
	tick := time.NewTicker(min(c.pool.cfg.KeepAlive, c.pool.cfg.IdleTimeout))
	defer tick.Stop()
	for {
		select {
		case <-dead:
			return
		case <-c.pool.ctx.Done():
			return
		case <-tick.C:
			if c.idle() || !c.alive(cl, dead) {
				return
			}
		}
	}
}

// idle reports whether the connection has gone unused for too long.
func (c *conn) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active == 0 && time.Since(c.lastUsed) >= c.pool.cfg.IdleTimeout
}

// alive sends an OpenSSH keepalive and waits for any answer (a "failure"
// reply proves the server is there as well as a success would).
func (c *conn) alive(cl *ssh.Client, dead <-chan struct{}) bool {
	answered := make(chan error, 1)
	go func() { // returns at the latest when cl is closed
		_, _, err := cl.SendRequest("keepalive@openssh.com", true, nil)
		answered <- err
	}()
	t := time.NewTimer(c.pool.cfg.ConnectTimeout)
	defer t.Stop()
	select {
	case err := <-answered:
		return err == nil
	case <-dead:
	case <-t.C:
	}
	return false
}

// drop forgets cl (if it is still the current client) and closes it, so
// the next command dials afresh.
func (c *conn) drop(cl *ssh.Client) {
	c.mu.Lock()
	current := c.client == cl
	if current {
		c.client, c.probed = nil, nil // a new connection is probed anew
	}
	c.mu.Unlock()
	cl.Close()
	if current {
		c.pool.connChanged()
	}
}

// closeClient closes the current client, if any.
func (c *conn) closeClient() {
	c.mu.Lock()
	cl := c.client
	c.mu.Unlock()
	if cl != nil {
		c.drop(cl)
	}
}

// acquire waits for a session slot of this connection.
func (c *conn) acquire(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *conn) release() { <-c.slots }

// session opens a session on the connection; the caller holds a slot. A
// broken connection is redialled once (no command was started on it, so
// retrying is safe). A refused session is retried with backoff while other
// sessions of ours are open — the server's own MaxSessions is lower than
// ours (OpenSSH refuses with "open failed"), or a just-closed session is
// not yet freed on its side — which is how commands queue beyond the
// server's limit. With none of ours open, refusals end after refuseGrace.
func (c *conn) session(ctx context.Context) (*ssh.Session, *ssh.Client, error) {
	backoff := 5 * time.Millisecond
	redialled := false
	var refusedSince time.Time
	for {
		cl, err := c.get(ctx)
		if err != nil {
			return nil, nil, err
		}
		s, err := c.newSession(ctx, cl)
		if err == nil {
			c.mu.Lock()
			c.active++
			c.mu.Unlock()
			return s, cl, nil
		}
		var refused *ssh.OpenChannelError
		switch {
		case errors.As(err, &refused):
			if refusedSince.IsZero() || c.busy() {
				refusedSince = time.Now()
			} else if time.Since(refusedSince) > refuseGrace {
				return nil, nil, fmt.Errorf("the server refuses sessions: %w", err)
			}
			if err := sleepCtx(ctx, backoff); err != nil {
				return nil, nil, err
			}
			backoff = min(2*backoff, 200*time.Millisecond)
		case redialled:
			return nil, nil, err
		default:
			c.drop(cl)
			redialled = true
		}
	}
}

// refuseGrace is how long refused sessions are retried when none of ours
// is open on the connection (a closed one may take a moment to be freed).
const refuseGrace = 2 * time.Second

// busy reports whether any session of ours is open on the connection.
func (c *conn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active > 0
}

// done marks a session of the connection closed.
func (c *conn) done() {
	c.mu.Lock()
	c.active--
	c.lastUsed = time.Now()
	c.mu.Unlock()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newSession opens a session on cl within ssh.connect_timeout. A host
// that does not answer a channel open in that time is presumed frozen
// (a stopped sshd, a host that hangs): its connection is dropped, which
// ends the wait, instead of holding the command until the keepalive
// notices, 30 s or more later. A caller that gives up (ctx) leaves the
// connection alone. A session that opens too late is closed.
func (c *conn) newSession(ctx context.Context, cl *ssh.Client) (*ssh.Session, error) {
	type opened struct {
		s   *ssh.Session
		err error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := cl.NewSession()
		done <- opened{s, err}
	}()
	t := time.NewTimer(c.pool.cfg.ConnectTimeout)
	defer t.Stop()
	var err error
	select {
	case o := <-done:
		return o.s, o.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		c.drop(cl)
		err = fmt.Errorf("%w: no answer to a session request within %v (ssh.connect_timeout); the connection was dropped", errFrozen, c.pool.cfg.ConnectTimeout)
	}
	go func() {
		if o := <-done; o.s != nil {
			o.s.Close()
		}
	}()
	return nil, err
}

// errFrozen marks a connection that stopped answering.
var errFrozen = errors.New("the host stopped answering")
