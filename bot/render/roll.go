package render

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// A native stream is rolled over before the platform ends it (its
// lifetime), or before it is full (the platform's length limit for a
// stream): a new stream is started in the background while the old one
// keeps taking the answer's text, and once the new one has started the
// answer goes on in it and the old one is stopped, also in the
// background, with nothing more to show. The moment of each stream's
// roll-over is booked on the workspace's budget (EditBudget.RollSlot), so
// that streams that started together do not roll over together.

// rolled is the outcome of starting the stream that takes over.
type rolled struct {
	ref connectors.Ref
	rid int64
	err error
	at  time.Time // when the start returned
}

// rollRetry is how long after a failed start the roll-over is tried
// again.
const rollRetry = 10 * time.Second

// rollFull is the share of a stream's length limit past which it rolls
// over.
const rollFull = 0.85

// rollTimer fires when the last page's stream is due to roll over; nil
// when none is, or a roll-over is under way.
func (r *Renderer) rollTimer() <-chan time.Time {
	if r.rolling != nil || len(r.pages) == 0 {
		return nil
	}
	p := r.pages[len(r.pages)-1]
	if !p.streaming || p.rollAt.IsZero() {
		return nil
	}
	return time.After(time.Until(p.rollAt))
}

// rollNow takes over with a stream that has started, and starts one
// when the last page's is due to roll over: while an answer keeps
// changing, run flushes without waiting on rollTimer.
func (r *Renderer) rollNow(ctx context.Context) {
	if r.rolling != nil && r.ready == nil {
		select {
		case res := <-r.rolling:
			r.ready = &res
		default:
		}
	}
	// The old stream takes the text until the new one may take a change
	// (the platform's interval for one message); one that no longer
	// streams, at once.
	if r.ready != nil && (r.ready.err != nil || !r.pages[len(r.pages)-1].streaming || time.Since(r.ready.at) >= r.limits.EditInterval) {
		r.takeOver(ctx, *r.ready)
	}
	if n := len(r.pages); n > 0 && r.rolling == nil && r.pages[n-1].streaming &&
		!r.pages[n-1].rollAt.IsZero() && !time.Now().Before(r.pages[n-1].rollAt) {
		r.roll(ctx)
	}
}

// awaitRoll waits for the stream that is starting, and its interval,
// then has it take over: the answer has ended, and its rest goes there.
func (r *Renderer) awaitRoll(ctx context.Context) {
	if r.ready == nil {
		select {
		case res := <-r.rolling:
			r.ready = &res
		case <-ctx.Done():
			return
		}
	}
	if r.ready.err == nil && !Sleep(ctx, time.Until(r.ready.at.Add(r.limits.EditInterval))) {
		return
	}
	r.takeOver(ctx, *r.ready)
}

// full reports whether the last page's stream is near its length limit.
func (r *Renderer) full() bool {
	if len(r.pages) == 0 {
		return false
	}
	p := r.pages[len(r.pages)-1]
	return p.streaming && float64(Chars(p.streamed)) > rollFull*float64(r.pageLimit())
}

// roll starts, in the background, the stream that takes over from the
// last page's.
func (r *Renderer) roll(ctx context.Context) {
	if len(r.pages) > 0 && r.pages[len(r.pages)-1].streaming {
		r.startTakeOver(ctx)
	}
}

// startTakeOver starts, in the background, a stream that takes over
// from the last page: once it has started (rolling), the answer is cut
// there and goes on in it (takeOver).
func (r *Renderer) startTakeOver(ctx context.Context) {
	st, ok := r.streamer()
	if !ok || r.rolling != nil || len(r.pages) == 0 {
		return
	}
	rid := r.reserve(ctx, "")
	ch := make(chan rolled, 1)
	r.rolling = ch
	rctx, cancel := context.WithCancel(ctx)
	r.rollCancel = cancel
	go func() {
		defer cancel()
		ref, err := st.StartStream(rctx, r.dest, connectors.Message{})
		ch <- rolled{ref: ref, rid: rid, err: err, at: time.Now()}
	}()
}

// dropRoll gives up the roll-over under way when the answer has ended
// while its stream's start still waits (Slack's Tier 2 budget, which
// every answer ending at once queues on) and the last page's stream can
// take the rest: it has life left and room. The rest then shows at once
// there instead of in a stream started only to hold it. A start already
// sent is not taken back (the connector's start, once sent, runs to its
// answer): the answer goes on in it as ever. It reports whether the
// roll-over was given up.
func (r *Renderer) dropRoll(ctx context.Context, text string) bool {
	n := len(r.pages)
	if r.rolling == nil || r.ready != nil || r.rollCancel == nil || n == 0 {
		return false
	}
	last := r.pages[n-1]
	if !last.streaming || last.held || !time.Now().Before(r.holdUntil(last)) || len(splitPages(text, r.pageLimit(), r.cuts)) > n {
		return false
	}
	r.rollCancel()
	var res rolled
	select {
	case res = <-r.rolling:
	case <-ctx.Done():
		return false
	}
	if res.err == nil {
		r.ready = &res // it had started: the rest goes there (awaitRoll)
		return false
	}
	r.rolling, r.rollCancel = nil, nil
	r.unreserve(ctx, res.rid)
	return true
}

// takeOver makes the stream that started the answer's last page: the
// answer is cut where the page before ends, and what follows goes on in
// the new stream.
func (r *Renderer) takeOver(ctx context.Context, res rolled) {
	r.rolling, r.ready, r.rollCancel = nil, nil, nil
	last := &r.pages[len(r.pages)-1]
	if res.err != nil {
		r.unreserve(ctx, res.rid)
		r.log.Warn("a stream could not roll over; trying again", "channel", r.dest.Channel, "err", res.err)
		last.rollAt = time.Now().Add(rollRetry)
		return
	}
	// A stream that started after the last page's ended takes the answer
	// on from there like any roll-over: the page that went on by edits
	// keeps its cards (msgcards.go).
	r.cuts = append(r.cuts, last.end)
	now := time.Now()
	r.pages = append(r.pages, page{ref: res.ref, recordID: res.rid, streaming: true, context: last.context, started: now,
		rollAt: r.budget.RollSlot(now, r.limits.StreamLifetime)})
	r.record(ctx, len(r.pages)-1, "")
	r.shownAt = now // the new stream's first append waits its interval
	r.mu.Lock()
	r.dirty = true
	r.mu.Unlock()
}

// stopRolled stops, in the background, the streams another has taken
// over from, with the rest of their page (a code fence closed).
func (r *Renderer) stopRolled(ctx context.Context, segs []Segment) {
	st, ok := r.streamer()
	if !ok {
		return
	}
	for i := 0; i < len(segs)-1 && i < len(r.pages)-1; i++ {
		p := &r.pages[i]
		if !p.streaming || r.hold(ctx, st, i, segs[i]) {
			continue
		}
		msg := connectors.Message{Text: segs[i].String()}
		p.streaming, p.shown, p.end = false, pageKey(msg), segs[i].Start+len(segs[i].Body)
		r.record(ctx, i, msg.Text)
		ref := p.ref
		r.bg.Go(func() {
			if err := st.StopStream(ctx, ref, msg); err != nil {
				r.log.Info("a rolled-over stream could not be stopped; the platform ends it", "channel", r.dest.Channel, "err", err)
			}
		})
	}
}
