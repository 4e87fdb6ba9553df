package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/opsbot/opsbot/store/leader"
	"github.com/opsbot/opsbot/store/replica"
)

// haRole is what serveBot needs of a process elected by ha: the listener
// it served /readyz "standby" on, and the leadership every side effect is
// fenced by. Nil outside ha: serveBot listens itself and nothing is fenced.
type haRole struct {
	ln      net.Listener
	elector *leader.Elector
	// rep replicates the database to the generation's replica with
	// ha.litestream; nil without.
	rep *replica.Replication
	log *slog.Logger
}

// listen is the listener serveBot serves on: the standby's, or a new one.
func (r *haRole) listen(addr string) (net.Listener, error) {
	if r == nil {
		return net.Listen("tcp", addr)
	}
	return r.ln, nil
}

// attach fences rt's side effects by the leadership, has /readyz say
// whether it is held, and stamps the audit rows with its generation.
func (r *haRole) attach(ctx context.Context, rt *parts) error {
	if r == nil {
		return nil
	}
	rt.fence.set(r.elector.Fence)
	rt.ready.Add("leadership", func(context.Context) error { return r.elector.Fence() })
	if err := rt.store.SetGeneration(ctx, r.elector.Generation()); err != nil {
		return err
	}
	if r.rep == nil {
		return nil
	}
	// The generation's replica starts with this state, before anything
	// acts: a standby follows it from now on.
	if err := r.rep.Start(ctx); err != nil {
		return fmt.Errorf("ha: replicate the database: %w", err)
	}
	rt.fence.replicateWith(r.sync)
	rt.ready.Add("replica", func(context.Context) error { return r.rep.Health() })
	return nil
}

// sync brings the replica up to date (every command waits for it), and
// logs why it could not.
func (r *haRole) sync(ctx context.Context) error {
	err := r.rep.Sync(ctx)
	if err != nil {
		r.log.Warn("the replica is not up to date: commands wait until it is", "err", err)
	}
	return err
}

// errSidecarGone ends `opsbot run` non-zero when the leader handed over
// for want of its sidecar (ha.litestream.sidecar_grace): until then it
// ran no command, and the standby's sidecar may answer.
var errSidecarGone = errors.New("this opsbot's Litestream sidecar stopped answering (ha.litestream.sidecar_grace), so nothing it did could reach the replica; it handed the lead to the standby and exits")

// watch syncs the replica every period, so a sidecar that restarted is
// given the database again even while nothing is written, and calls
// gone once the sidecar has not answered for grace.
func (r *haRole) watch(ctx context.Context, period, grace time.Duration, gone func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.rep.Sync(ctx) == nil || r.rep.Down() < grace {
			continue
		}
		r.log.Error("the Litestream sidecar has not answered: handing the lead to the standby", "for", r.rep.Down().Round(time.Second).String())
		gone()
		return
	}
}

// errLeadershipLost ends `opsbot run` non-zero once the bot has stopped
// acting: the pod restarts as a standby.
var errLeadershipLost = errors.New("this opsbot lost the leadership lease (its renewals failed) and stopped acting; it exits so that it restarts as a standby")

// serveHA waits as a standby until this process holds the Lease, then
// serves the bot while it renews it. The listener opens first: /healthz
// answers on both, /readyz is 503 "standby" until then.
func serveHA(ctx context.Context, cfg *Config, log *slog.Logger, hooks runHooks) error {
	elector, err := cfg.HA.Elector(os.Getenv)
	if err != nil {
		return usageError(err)
	}
	ln, err := net.Listen("tcp", cfg.Web.Listen)
	if err != nil {
		return usageError(listenError(cfg.Web.Listen, err))
	}
	if _, port, _ := net.SplitHostPort(cfg.Web.Listen); port == "0" {
		cfg.Web.Listen = ln.Addr().String()
	}
	shared := newHandoff(ln)
	defer shared.Close()
	standby := &http.Server{Handler: standbyMux(), ReadHeaderTimeout: 10 * time.Second}
	go standby.Serve(shared.next())
	log.Info("opsbot standby", "version", version, "listen", "http://"+ln.Addr().String(), "lease", cfg.HA.WithDefaults(os.Getenv).LeaseName)
	pod := labelPod(ctx, cfg.HA.WithDefaults(os.Getenv), log)
	defer pod.stop()
	rep, db := cfg.HA.Litestream, cfg.Store.WithDefaults().Path
	var warm *replica.Follower
	stopFollowing := func() {}
	if rep.Enabled() {
		warm = replica.NewFollower(rep, db+".standby", log)
		stopFollowing = followLeader(ctx, elector, warm, rep, cfg.HA.WithDefaults(os.Getenv), log)
	}
	gen, err := elector.Acquire(ctx)
	stopFollowing()
	standby.Close()
	if err != nil {
		if warm != nil {
			warm.Stop()
		}
		return nil // told to stop while standing by
	}
	if rep.Enabled() {
		if gen, err = pastTaken(ctx, elector, rep, gen, log); err != nil {
			warm.Stop()
			return fmt.Errorf("ha: %w", err)
		}
	}
	log.Info("opsbot leads", "generation", gen)
	pod.lead()
	// Renewed from now on, through a catch-up that may take longer than
	// the lease: a promotion never loses it before it serves.
	lease := holdLease(ctx, elector, log)
	defer lease.end()
	role := &haRole{ln: shared.next(), elector: elector, log: log}
	if rep.Enabled() {
		role.rep = replica.NewReplication(rep, db, rep.WithDefaults().Generation(gen))
		// The sidecar may still replicate this file to an earlier
		// generation's replica (this pod led before): it lets go of it
		// before the file is replaced.
		if err := replica.NewSidecar(rep).Unregister(lease.ctx, db); err != nil {
			warm.Stop()
			return fmt.Errorf("ha: %w", err)
		}
		if _, err := replica.CatchUp(lease.ctx, rep, gen, db, warm, catchUpWait, log); err != nil {
			if lease.end() != nil {
				return errLeadershipLost
			}
			if ctx.Err() != nil {
				return nil // told to stop while catching up
			}
			return fmt.Errorf("ha: catch up with the last leader's replica: %w", err)
		}
	}
	return serveLeader(cfg, log, hooks, role, lease)
}

// heldLease is the Lease while Hold renews it: ctx ends when it is lost
// (or the process is told to stop), and end lets it go.
type heldLease struct {
	ctx     context.Context
	stop    context.CancelFunc
	release context.CancelFunc
	lost    chan error

	ended bool
	held  error
}

// holdLease renews the Lease elector holds until end; a renewal that
// fails past the deadline ends ctx.
func holdLease(ctx context.Context, elector *leader.Elector, log *slog.Logger) *heldLease {
	botCtx, stop := context.WithCancel(ctx)
	holdCtx, release := context.WithCancel(context.WithoutCancel(ctx))
	h := &heldLease{ctx: botCtx, stop: stop, release: release, lost: make(chan error, 1)}
	go func() {
		err := elector.Hold(holdCtx)
		if errors.Is(err, leader.ErrLost) {
			log.Error("leadership lost: stopping the connectors and schedules", "generation", elector.Generation())
		}
		h.lost <- err
		stop()
	}()
	return h
}

// end stops what serves under the lease, lets the Lease go, and returns
// leader.ErrLost if it had been lost. Call it once what was done under
// it is synced: a successor starts from it.
func (h *heldLease) end() error {
	h.stop()
	h.release()
	if !h.ended {
		h.ended, h.held = true, <-h.lost
	}
	return h.held
}

// pastTaken moves the Lease past the generations the replica already
// holds from gen on (a Lease recreated while its bucket was kept: a
// reinstall), so this leader neither overwrites an earlier leader's
// replica nor starts without its state; it returns the generation this
// process leads as.
func pastTaken(ctx context.Context, elector *leader.Elector, rep replica.Settings, gen int64, log *slog.Logger) (int64, error) {
	newest, taken, err := replica.Taken(ctx, rep, gen)
	if err != nil || !taken {
		return gen, err
	}
	if err := elector.Advance(ctx, newest+1); err != nil {
		return gen, fmt.Errorf("move the Lease past the generations the replica holds: %w", err)
	}
	log.Warn("the replica holds generations from before this Lease (it was recreated): this leader goes on after them", "replica_generation", newest, "generation", newest+1)
	return newest + 1, nil
}

// catchUpWait is how long a new leader waits for its warm copy to reach
// the replica's last transaction before it restores the replica whole.
const catchUpWait = 10 * time.Second

// followLeader keeps warm following the replica of the Lease's holder,
// generation by generation, until the returned func is called.
func followLeader(ctx context.Context, elector *leader.Elector, warm *replica.Follower, rep replica.Settings, ha leader.Settings, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ha.RetryPeriod)
		defer t.Stop()
		var failing error
		for {
			if holder, gen := elector.Seen(); holder != "" {
				err := warm.Follow(ctx, gen, rep.Generation(gen))
				if err != nil && (failing == nil || err.Error() != failing.Error()) {
					log.Warn("the standby cannot follow the leader's replica; it restores it whole on promotion", "generation", gen, "err", err)
				}
				failing = err
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// serveLeader serves the bot while Hold renews the Lease; a renewal that
// fails past the deadline stops the bot (connectors and schedules
// first, as serveBot shuts down) and ends with errLeadershipLost. The
// Lease is let go only once the bot has stopped and its last records
// are on the replica: a successor starts from everything it did.
func serveLeader(cfg *Config, log *slog.Logger, hooks runHooks, role *haRole, lease *heldLease) error {
	botCtx, stop := lease.ctx, lease.stop
	gone := make(chan struct{})
	if role.rep != nil {
		grace := cfg.HA.Litestream.WithDefaults().SidecarGrace
		go role.watch(botCtx, cfg.HA.WithDefaults(os.Getenv).RetryPeriod, grace, func() { close(gone); stop() })
	}
	hooks.ha = role
	err := serveBot(botCtx, cfg, log, hooks)
	stop()
	if role.rep != nil && role.elector.Fence() == nil {
		if serr := role.rep.Sync(context.WithoutCancel(botCtx)); serr != nil {
			log.Warn("the last records did not reach the replica before the hand-over", "err", serr)
		}
	}
	if errors.Is(lease.end(), leader.ErrLost) {
		return errLeadershipLost
	}
	select {
	case <-gone:
		return errSidecarGone
	default:
	}
	return err
}

// standbyMux is what a standby serves: /healthz 200, /readyz 503.
func standbyMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(readyReport{Status: "standby", Checks: map[string]string{"leadership": "standby: another opsbot holds the lease"}, Down: []string{"leadership"}})
	})
	return mux
}

// handoff passes one listener's connections to one server after another:
// the standby's, then the bot's, so the port never closes in between.
type handoff struct {
	ln    net.Listener
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newHandoff(ln net.Listener) *handoff {
	h := &handoff{ln: ln, conns: make(chan net.Conn), done: make(chan struct{})}
	go func() {
		defer close(h.conns)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case h.conns <- c:
			case <-h.done:
				c.Close()
				return
			}
		}
	}()
	return h
}

// next is a listener for the next server; closing it does not close the
// port.
func (h *handoff) next() net.Listener {
	return &handedListener{h: h, done: make(chan struct{})}
}

// Close closes the port.
func (h *handoff) Close() {
	h.once.Do(func() {
		close(h.done)
		h.ln.Close()
	})
}

type handedListener struct {
	h    *handoff
	done chan struct{}
	once sync.Once
}

func (l *handedListener) Accept() (net.Conn, error) {
	select {
	case c, ok := <-l.h.conns:
		if !ok {
			return nil, net.ErrClosed
		}
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handedListener) Addr() net.Addr { return l.h.ln.Addr() }
