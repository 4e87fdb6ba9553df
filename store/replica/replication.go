package replica

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Replication is one database the sidecar replicates to one replica (a
// generation's), kept so: a sidecar that restarted (the kubelet restarts
// a native sidecar that dies) has forgotten the database, and is given
// it again at the next Sync.
type Replication struct {
	sidecar *Sidecar
	path    string
	replica string

	// register is held while the database is given to the sidecar
	// (Start) or given again: two Syncs that found it forgotten register
	// it once, and none before Start has.
	register sync.Mutex
	started  bool

	mu   sync.Mutex
	down time.Time // since when the sidecar has not answered; zero while it does
	last error     // the last Sync's outcome
}

// NewReplication replicates the database at path to replica through the
// sidecar of s.
func NewReplication(s Settings, path, replica string) *Replication {
	return &Replication{sidecar: NewSidecar(s), path: path, replica: replica}
}

// Start has the sidecar replicate the database, and returns once the
// replica holds what it holds now.
func (r *Replication) Start(ctx context.Context) error {
	r.register.Lock()
	err := r.sidecar.Register(ctx, r.path, r.replica)
	r.started = err == nil
	r.register.Unlock()
	if err != nil {
		return err
	}
	return r.Sync(ctx)
}

// Sync returns once the replica holds every committed transaction of the
// database, registering it again with a sidecar that forgot it.
func (r *Replication) Sync(ctx context.Context) error {
	err := r.sidecar.Sync(ctx, r.path)
	if errors.Is(err, ErrNotReplicating) {
		r.register.Lock()
		if err = r.sidecar.Sync(ctx, r.path); errors.Is(err, ErrNotReplicating) && r.started {
			if err = r.sidecar.Register(ctx, r.path, r.replica); err == nil {
				err = r.sidecar.Sync(ctx, r.path)
			}
		}
		r.register.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = err
	switch {
	case !errors.Is(err, ErrSidecarDown):
		r.down = time.Time{}
	case r.down.IsZero():
		r.down = time.Now()
	}
	return err
}

// Health is the last Sync's error, nil when it succeeded.
func (r *Replication) Health() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// Down is how long the sidecar has not answered, 0 while it does.
func (r *Replication) Down() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down.IsZero() {
		return 0
	}
	return time.Since(r.down)
}
