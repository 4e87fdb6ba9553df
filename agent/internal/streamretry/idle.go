package streamretry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultIdleTimeout is how long a call may receive nothing — no response
// headers, no event of its stream — before it is given up as stalled.
const DefaultIdleTimeout = 60 * time.Second

// Stalled is a call that received nothing for After: the server sent no
// headers, or its stream stopped. Run makes such a call again once, if
// nothing of it was shown; after that it is worded for the thread.
type Stalled struct{ After time.Duration }

// Error says for how long nothing came.
func (e *Stalled) Error() string {
	return fmt.Sprintf("the model API sent nothing for %s", seconds(e.After))
}

// seconds words d as a person reads a short wait: "60s", "1.5s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Round(100*time.Millisecond).Seconds())
}

// Timer is what the idle guard needs of a timer: *time.Timer's methods.
type Timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// AfterFunc starts a timer that calls f after d: time.AfterFunc, unless a
// test gives a clock it moves itself.
type AfterFunc func(d time.Duration, f func()) Timer

// RealTimers is the AfterFunc of the real clock.
func RealTimers(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Idle watches one call for silence: the returned context is cancelled
// when alive is not called for d (d <= 0: never). The call passes its
// error through done, which turns the cancel of a stall into a *Stalled
// and stops the watch.
func Idle(ctx context.Context, d time.Duration, after AfterFunc) (call context.Context, alive func(), done func(error) error) {
	if d <= 0 {
		return ctx, func() {}, func(err error) error { return err }
	}
	call, cancel := context.WithCancelCause(ctx)
	stalled := &Stalled{After: d}
	t := after(d, func() { cancel(stalled) })
	alive = func() { t.Reset(d) }
	done = func(err error) error {
		t.Stop()
		defer cancel(nil)
		if ctx.Err() == nil && errors.Is(context.Cause(call), stalled) {
			return stalled
		}
		return err
	}
	return call, alive, done
}
