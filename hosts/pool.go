package hosts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Pool runs commands on SSH hosts over one pooled connection per host.
//
// A connection is opened by the first command for its host (concurrent
// first commands share the one dial), reused by the following ones — a
// new session per command, at most ssh.max_sessions at once, the rest
// queue — health-checked every ssh.keepalive_interval, closed after
// ssh.idle_timeout unused, and redialled after a failure. At most
// ssh.dial_concurrency hosts are dialled at once. Host keys are verified
// against ssh.known_hosts; agent forwarding is never requested.
//
// A Pool is safe for concurrent use. Close it when done.
type Pool struct {
	cfg       SSHConfig
	exec      ExecConfig
	keys      *hostKeys
	signers   []ssh.Signer
	agentSock string
	user      string // default user when neither host nor config names one
	dialSem   chan struct{}

	ctx    context.Context // cancelled by Close; parent of dials and watchers
	cancel context.CancelFunc
	wg     sync.WaitGroup // dials and connection watchers

	// Tracker, when set, records each run while it lasts, for the
	// start-up sweep after a crash (End).
	Tracker Tracker

	// RemoteSandboxMode is the remote_sandbox of the hosts that set none
	// (policy.remote_sandbox): RemoteSandboxRequired (also when empty) or
	// RemoteSandboxBestEffort. Set it before the first Run.
	RemoteSandboxMode string

	// afterStart, when set (by tests), runs once a command's exec
	// request has been answered: it stands for a late reply.
	afterStart func(*remoteRun)

	mu      sync.Mutex
	conns   map[string]*conn // by user@address
	changed chan struct{}    // closed, and replaced, when a connection opens or closes
}

var _ Runner = (*Pool)(nil)

// NewPool makes a pool from cfg's ssh and exec sections (cfg.Hosts is not
// used: hosts come with each Run). The identity files are read now, so a
// bad key is reported at start; known_hosts is read when dialling.
func NewPool(cfg Config) (*Pool, error) {
	cfg = cfg.WithDefaults()
	signers, err := loadSigners(cfg.SSH.IdentityFiles)
	if err != nil {
		return nil, fmt.Errorf("hosts: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		cfg:       cfg.SSH,
		exec:      cfg.Exec,
		keys:      &hostKeys{file: cfg.SSH.KnownHosts},
		signers:   signers,
		agentSock: os.Getenv("SSH_AUTH_SOCK"),
		user:      currentUser(),
		dialSem:   make(chan struct{}, cfg.SSH.DialConcurrency),
		ctx:       ctx,
		cancel:    cancel,
		conns:     map[string]*conn{},
		changed:   make(chan struct{}),
	}
	return p, nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// Close closes every connection and waits for the pool's goroutines. It
// is safe to call more than once; commands still running fail.
func (p *Pool) Close() error {
	p.cancel()
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.closeClient()
	}
	p.wg.Wait()
	return nil
}

// Connected reports how many connections are open now: one per host
// and remote user (a host with a readonly_user may have two).
func (p *Pool) Connected() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		c.mu.Lock()
		if c.client != nil {
			n++
		}
		c.mu.Unlock()
	}
	return n
}

// connChanged wakes whoever waits for a connection to open or close.
// Call it without holding p.mu or any conn's mu.
func (p *Pool) connChanged() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.changed)
	p.changed = make(chan struct{})
}

// userFor is the remote user of a command on h: for an unattended one
// the host's read-only user, else ssh.readonly_user; otherwise, and when
// neither is set, the host's own user, else ssh.user, else ours.
func (p *Pool) userFor(h Host, unattended bool) string {
	switch {
	case unattended && h.ReadOnlyUser != "":
		return h.ReadOnlyUser
	case unattended && p.cfg.ReadOnlyUser != "":
		return p.cfg.ReadOnlyUser
	case h.User != "":
		return h.User
	case p.cfg.User != "":
		return p.cfg.User
	}
	return p.user
}

// conn returns the pooled connection state of h for user, creating it
// if needed: each user of a host has a connection of its own.
func (p *Pool) conn(h Host, user string) (*conn, error) {
	if h.Address == "" {
		return nil, fmt.Errorf("host %q has no address (the local host runs through hosts.Local)", h.Name)
	}
	key := user + "@" + h.Address
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return nil, errors.New("the pool is closed")
	}
	c, ok := p.conns[key]
	if !ok {
		c = &conn{pool: p, host: h, user: user, slots: make(chan struct{}, p.cfg.MaxSessions), probing: make(chan struct{}, 1)}
		p.conns[key] = c
	}
	return c, nil
}

// dial connects to h and completes the SSH handshake within
// ssh.connect_timeout, holding one of the pool's dial slots.
func (p *Pool) dial(ctx context.Context, h Host, user string) (*ssh.Client, error) {
	select {
	case p.dialSem <- struct{}{}:
		defer func() { <-p.dialSem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	verify, algos, err := p.keys.verifier(h)
	if err != nil {
		return nil, err
	}
	auth, closeAgent := publicKeys(p.signers, p.agentSock)
	defer closeAgent()
	cfg := &ssh.ClientConfig{
		User:              user,
		Auth:              []ssh.AuthMethod{auth},
		HostKeyCallback:   verify,
		HostKeyAlgorithms: algos,
		Timeout:           p.cfg.ConnectTimeout,
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ConnectTimeout)
	defer cancel()
	d := net.Dialer{KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", h.Address)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	nc = withQuickAck(nc)
	stop := context.AfterFunc(ctx, func() { nc.Close() }) // bounds the handshake
	cc, chans, reqs, err := ssh.NewClientConn(nc, h.Address, cfg)
	if !stop() || err != nil {
		nc.Close()
		return nil, handshakeError(ctx, err, user)
	}
	return ssh.NewClient(cc, chans, reqs), nil
}

// handshakeError keeps host key errors as they are and explains the rest.
func handshakeError(ctx context.Context, err error, user string) error {
	var hk *HostKeyError
	switch {
	case errors.As(err, &hk):
		return hk
	case err == nil || ctx.Err() != nil:
		return fmt.Errorf("ssh handshake: timed out or cancelled: %w", context.Cause(ctx))
	case strings.Contains(err.Error(), "unable to authenticate"):
		return fmt.Errorf("authentication as %q failed: check ssh.identity_files, the ssh-agent at SSH_AUTH_SOCK, and the host's authorized_keys: %w", user, err)
	}
	return err
}
