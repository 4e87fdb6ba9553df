package streamretry

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A call that receives nothing for the idle timeout is cancelled and
// reported stalled; events push the timeout back; a caller's own cancel
// is not a stall.
func TestIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		call, alive, done := Idle(context.Background(), time.Minute, RealTimers)
		time.Sleep(50 * time.Second)
		alive()
		time.Sleep(50 * time.Second)
		if call.Err() != nil {
			t.Fatal("the call was cancelled although an event came 50s ago")
		}
		<-call.Done()
		var stalled *Stalled
		if err := done(call.Err()); !errors.As(err, &stalled) || err.Error() != "the model API sent nothing for 60s" {
			t.Errorf("err = %v; want a stall of 60s", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		call, _, done := Idle(parent, time.Minute, RealTimers)
		cancel()
		<-call.Done()
		if err := done(call.Err()); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want the caller's cancel", err)
		}
	})
}
