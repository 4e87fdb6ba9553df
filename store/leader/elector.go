package leader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// The timings of client-go's leaderelection, which the issue asks for.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// ErrLost is what Hold returns when a renewal did not succeed within the
// renew deadline: another process may lead from the lease's expiry on.
var ErrLost = errors.New("leadership lost: the lease could not be renewed in time")

// ErrNotLeader is Fence's answer in a process that does not lead, or
// whose last renewal is older than the renew deadline.
var ErrNotLeader = errors.New("this opsbot does not hold the leadership lease (or its lease is not fresh)")

// Config says which Lease to contend for, as whom, and how often.
type Config struct {
	// Client reads and writes the Lease.
	Client *Client
	// Identity is this process's holderIdentity: the pod's name.
	Identity string
	// LeaseDuration is how long a holder's lease lasts after its last
	// renewal; others wait that long, by their own clock, before taking it.
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder keeps trying to renew before it
	// gives up leading; shorter than LeaseDuration, so it stops acting
	// before anyone else may start.
	RenewDeadline time.Duration
	// RetryPeriod is the time between attempts.
	RetryPeriod time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Elector contends for one Lease and, once it holds it, renews it.
type Elector struct {
	cfg Config

	mu         sync.Mutex
	observed   []byte    // the last Lease spec seen, as JSON
	observedAt time.Time // when it was first seen, by this clock
	seen       LeaseSpec // the last Lease spec seen
	renewedAt  time.Time // the last successful acquire or renew
	generation int64
	leading    bool
}

// New returns an Elector over cfg, its zero durations the defaults.
func New(cfg Config) (*Elector, error) {
	if cfg.Client == nil || cfg.Identity == "" {
		return nil, errors.New("leader election needs a Lease client and an identity")
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.RenewDeadline == 0 {
		cfg.RenewDeadline = DefaultRenewDeadline
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = DefaultRetryPeriod
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := Check(cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod); err != nil {
		return nil, err
	}
	return &Elector{cfg: cfg}, nil
}

// Check says in words what is wrong with a set of timings: client-go's
// rules (lease > renew deadline > retry period × 1.2).
func Check(lease, renew, retry time.Duration) error {
	switch {
	case lease <= renew:
		return errors.New("the lease duration must be longer than the renew deadline, so that a holder stops acting before its lease can be taken")
	case renew <= time.Duration(1.2*float64(retry)):
		return errors.New("the renew deadline must be longer than 1.2 × the retry period, so that a holder retries a failed renewal at least once")
	case retry <= 0:
		return errors.New("the retry period must be positive")
	}
	return nil
}

// Acquire returns once this process holds the Lease, with its
// generation (the Lease's leaseTransitions), or ctx's error.
func (e *Elector) Acquire(ctx context.Context) (int64, error) {
	for {
		if e.try(ctx) {
			return e.Generation(), nil
		}
		wait := time.Duration(float64(e.cfg.RetryPeriod) * (1 + 0.2*rand.Float64()))
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// Hold renews the Lease every retry period until ctx ends (it then lets
// the Lease go, so a standby need not wait for it to expire, and returns
// nil) or a renewal does not succeed within the renew deadline (ErrLost).
// From the deadline on Fence refuses, whether or not Hold has returned.
func (e *Elector) Hold(ctx context.Context) error {
	t := time.NewTicker(e.cfg.RetryPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			e.release(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		}
		attempt, cancel := context.WithDeadline(ctx, e.deadline())
		ok := e.try(attempt)
		cancel()
		if !ok && e.Fence() != nil {
			e.mu.Lock()
			e.leading = false
			e.mu.Unlock()
			return ErrLost
		}
	}
}

// Advance moves the Lease's generation (its leaseTransitions) on to gen
// while this process holds it: a Lease recreated after its generations
// named replicas (store/replica) starts again at 0, and a leader must
// not take a generation an earlier leader wrote under.
func (e *Elector) Advance(ctx context.Context, gen int64) error {
	if err := e.Fence(); err != nil {
		return err
	}
	l, err := e.cfg.Client.Get(ctx)
	if err != nil {
		return err
	}
	if l.Spec.HolderIdentity != e.cfg.Identity {
		return ErrLost
	}
	now := e.cfg.Now()
	l.Spec.LeaseTransitions, l.Spec.RenewTime = int32(gen), &MicroTime{now}
	updated, err := e.cfg.Client.Update(ctx, l)
	if err != nil {
		return err
	}
	e.won(updated, now)
	return nil
}

// Fence is nil while this process leads on a fresh lease: renewed within
// the renew deadline. Every side effect asks it first.
func (e *Elector) Fence() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leading || !e.cfg.Now().Before(e.renewedAt.Add(e.cfg.RenewDeadline)) {
		return ErrNotLeader
	}
	return nil
}

// Leading says whether this process holds the Lease (fresh or not).
func (e *Elector) Leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

// Seen is the Lease as this process last read it: its holder (empty
// before a read, or when none holds it) and generation. A standby
// follows the holder's replica by it.
func (e *Elector) Seen() (holder string, generation int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen.HolderIdentity, int64(e.seen.LeaseTransitions)
}

// Generation is the Lease's leaseTransitions as this process acquired it.
func (e *Elector) Generation() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.generation
}

func (e *Elector) deadline() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.renewedAt.Add(e.cfg.RenewDeadline)
}

// try is client-go's tryAcquireOrRenew: create the Lease if there is
// none; leave it alone while another holder's lease runs (by when this
// process saw it change, not by the holder's clock); else write it as
// ours at the resourceVersion read, so a concurrent writer wins or loses
// whole.
func (e *Elector) try(ctx context.Context) bool {
	now := e.cfg.Now()
	l, err := e.cfg.Client.Get(ctx)
	if errors.Is(err, ErrNotFound) {
		l = &Lease{Spec: e.spec(now, now, 0)}
		created, err := e.cfg.Client.Create(ctx, l)
		return err == nil && e.won(created, now)
	}
	if err != nil {
		return false
	}
	e.observe(l.Spec, now)
	if !e.mayTake(l.Spec, now) {
		return false
	}
	e.mu.Lock()
	leading := e.leading && l.Spec.HolderIdentity == e.cfg.Identity
	e.mu.Unlock()
	if leading {
		l.Spec = e.spec(l.Spec.AcquireTime.Time, now, l.Spec.LeaseTransitions)
	} else {
		l.Spec = e.spec(now, now, l.Spec.LeaseTransitions+1)
	}
	updated, err := e.cfg.Client.Update(ctx, l)
	return err == nil && e.won(updated, now)
}

func (e *Elector) spec(acquired, now time.Time, transitions int32) LeaseSpec {
	return LeaseSpec{HolderIdentity: e.cfg.Identity, LeaseDurationSeconds: int32(e.cfg.LeaseDuration / time.Second),
		AcquireTime: &MicroTime{acquired}, RenewTime: &MicroTime{now}, LeaseTransitions: transitions}
}

// observe notes when the Lease's record last changed, by this clock.
func (e *Elector) observe(s LeaseSpec, now time.Time) {
	b, _ := json.Marshal(s)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = s
	if !bytes.Equal(b, e.observed) {
		e.observed, e.observedAt = b, now
	}
}

// mayTake says whether the Lease is ours, free, or expired.
func (e *Elector) mayTake(s LeaseSpec, now time.Time) bool {
	if s.HolderIdentity == "" || s.HolderIdentity == e.cfg.Identity {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.observedAt.Add(time.Duration(s.LeaseDurationSeconds) * time.Second).After(now)
}

// won records a successful write of l at now.
func (e *Elector) won(l *Lease, now time.Time) bool {
	b, _ := json.Marshal(l.Spec)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observed, e.observedAt = b, now
	e.renewedAt, e.leading = now, true
	e.generation = int64(l.Spec.LeaseTransitions)
	return true
}

// release lets the Lease go as client-go's ReleaseOnCancel does: no
// holder, a one-second duration, the transitions kept.
func (e *Elector) release(ctx context.Context) {
	e.mu.Lock()
	leading := e.leading
	e.leading = false
	e.mu.Unlock()
	if !leading {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.RetryPeriod)
	defer cancel()
	l, err := e.cfg.Client.Get(ctx)
	if err != nil || l.Spec.HolderIdentity != e.cfg.Identity {
		return
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = "", 1
	e.cfg.Client.Update(ctx, l) // best effort: else the lease expires
}
