package bot

import (
	"context"
	"sync"
)

// Settled log lines: after a start, once what a previous run left — events
// in the inbox, decided approvals without their follow-up — is acted on,
// and the first expiry sweep has shown every decision on its card, the
// bot logs SettledAfterStart once (Info); and each time, after work, it
// finds nothing on record left to act on, Settled (Debug). A supervisor
// or a test that restarts opsbot waits on these lines instead of polling
// the database.
const (
	SettledAfterStart = "recovered: every event and decision a previous run left is acted on"
	Settled           = "settled: nothing on record is left to act on"
)

// settleWatch checks, when kicked, whether anything on record is left to
// act on; one goroutine (watch) does the checks, so a burst of kicks
// costs one query.
type settleWatch struct {
	once sync.Once
	kick chan struct{}

	mu     sync.Mutex
	swept  bool // the first expiry sweep is done
	logged bool // SettledAfterStart is logged
}

// kicks is the channel of kicks, made on first use.
func (w *settleWatch) kicks() chan struct{} {
	w.once.Do(func() { w.kick = make(chan struct{}, 1) })
	return w.kick
}

// kickSettle asks for a check: something on record may have been acted on.
func (b *Bot) kickSettle() {
	select {
	case b.settle.kicks() <- struct{}{}:
	default: // a check is already due
	}
}

// swept records that the first expiry sweep is done, and kicks.
func (b *Bot) swept() {
	b.settle.mu.Lock()
	b.settle.swept = true
	b.settle.mu.Unlock()
	b.kickSettle()
}

// watchSettled logs the settled lines until ctx ends.
func (b *Bot) watchSettled(ctx context.Context) {
	w := &b.settle
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kicks():
		}
		w.mu.Lock()
		swept := w.swept
		w.mu.Unlock()
		if !swept {
			continue // the sweep's end kicks again
		}
		if b.Store == nil {
			continue
		}
		n, err := b.Store.Unsettled(ctx)
		if err != nil || n > 0 {
			continue
		}
		if !w.logged {
			w.logged = true
			b.log().Info(SettledAfterStart)
		}
		b.log().Debug(Settled)
	}
}
