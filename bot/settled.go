package bot

import (
	"context"
	"log/slog"
	"sync"
)

// Settled log lines: after a start, once what a previous run left — events
// in the inbox, decided approvals without their follow-up — is acted on,
// and the first expiry sweep has shown every decision on its card, the
// bot logs SettledAfterStart once (Info, or Debug when nothing was left:
// a new database); and each time, after work, it
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
	// unsettled counts what is on record and not yet acted on (the
	// store's Unsettled).
	unsettled func(ctx context.Context) (int, error)
	log       *slog.Logger
	kicks     chan struct{}

	mu     sync.Mutex
	swept  bool // the first expiry sweep is done
	logged bool // SettledAfterStart is logged
	left   bool // a previous run left something to act on (measure)
}

// measure records, before the start acts on anything, whether a previous
// run left anything on record: with nothing (a new database) there is
// nothing recovered to tell at Info.
func (w *settleWatch) measure(ctx context.Context) {
	n, err := w.unsettled(ctx)
	w.mu.Lock()
	w.left = err != nil || n > 0
	w.mu.Unlock()
}

func newSettleWatch(unsettled func(ctx context.Context) (int, error), log *slog.Logger) *settleWatch {
	return &settleWatch{unsettled: unsettled, log: log, kicks: make(chan struct{}, 1)}
}

// kick asks for a check: something on record may have been acted on.
func (w *settleWatch) kick() {
	select {
	case w.kicks <- struct{}{}:
	default: // a check is already due
	}
}

// sweptNow records that the first expiry sweep is done, and kicks.
func (w *settleWatch) sweptNow() {
	w.mu.Lock()
	w.swept = true
	w.mu.Unlock()
	w.kick()
}

// watch logs the settled lines until ctx ends.
func (w *settleWatch) watch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kicks:
		}
		w.mu.Lock()
		swept, left := w.swept, w.left
		w.mu.Unlock()
		if !swept {
			continue // the sweep's end kicks again
		}
		n, err := w.unsettled(ctx)
		if err != nil || n > 0 {
			continue
		}
		if !w.logged {
			w.logged = true
			level := slog.LevelDebug // nothing to recover: only a supervisor waits on it
			if left {
				level = slog.LevelInfo
			}
			w.log.Log(ctx, level, SettledAfterStart)
		}
		w.log.Debug(Settled)
	}
}
