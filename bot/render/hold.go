package render

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// Held streams: a stream rolled over (roll.go) while one of its task
// cards is still pending or in progress is not stopped with the rest of
// its page: once stopped, the platform no longer changes its cards
// (Slack's), so the card would end without its task's true status. The
// old stream keeps the card, and gets its updates, while the answer's
// text goes on in the new stream; once every card it holds has ended,
// it is stopped with nothing more to show.
//
// Past the platform's lifetime for a stream (Limits.StreamLifetime, less
// holdMargin), a held stream is stopped all the same: its message then
// goes on by edits, its open cards as blocks (msgcards.go), and each ends
// there with its task — one card from start to end. A card starts only
// where its task's limit fits (cardlife.go), so only a task longer than
// that gets here.

// holdMargin is how long before the end of a stream's lifetime a held
// stream is stopped, its open cards going on in its message's edits.
const holdMargin = 10 * time.Second

// holdUntil is when held page p must stop.
func (r *Renderer) holdUntil(p page) time.Time {
	return p.started.Add(r.limits.StreamLifetime - holdMargin)
}

// holdTimer fires when the first held stream must stop; nil when none is
// held.
func (r *Renderer) holdTimer() <-chan time.Time {
	var first time.Time
	for _, p := range r.pages {
		if p.held && (first.IsZero() || r.holdUntil(p).Before(first)) {
			first = r.holdUntil(p)
		}
	}
	if first.IsZero() || r.limits.StreamLifetime <= 0 {
		return nil
	}
	return time.After(time.Until(first))
}

// cardPage is the page whose stream shows task id's card: the one it
// first showed in, while that still streams, else the last page.
func (r *Renderer) cardPage(id string) int {
	last := len(r.pages) - 1
	if i, ok := r.taskPage[id]; ok && i < last && r.pages[i].streaming {
		return i
	}
	if r.taskPage == nil {
		r.taskPage = map[string]int{}
	}
	r.taskPage[id] = last
	return last
}

// openCards reports whether page i holds a card still pending or in
// progress, or one changed and not sent yet.
func (r *Renderer) openCards(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.taskPage {
		if at != i {
			continue
		}
		if s := r.tasks[id].Status; s != connectors.TaskComplete && s != connectors.TaskError {
			return true
		}
	}
	for _, id := range r.taskDirty {
		if at, ok := r.taskPage[id]; ok && at == i {
			return true
		}
	}
	return false
}

// hold keeps page i's stream open for its open cards, with the rest of
// its page appended; it reports false when the page has none to hold.
func (r *Renderer) hold(ctx context.Context, st connectors.Streamer, i int, seg Segment) bool {
	p := &r.pages[i]
	if p.held {
		return true
	}
	if !r.openCards(i) {
		return false
	}
	text := seg.String()
	if more := text[min(len(p.streamed), len(text)):]; len(text) >= len(p.streamed) && text[:len(p.streamed)] == p.streamed && more != "" {
		if err := st.AppendStream(ctx, p.ref, more); err != nil {
			return false // the platform ended it: stopped as any other
		}
		p.streamed = text
	}
	p.held, p.end = true, seg.Start+len(seg.Body)
	r.record(ctx, i, p.streamed)
	return true
}

// releaseHeld stops, in the background, the held streams whose cards
// have all ended, or whose lifetime is nearly over, or all of them once
// the answer is done. A stream stopped early with open cards goes on by
// edits that show them (keepCards).
func (r *Renderer) releaseHeld(ctx context.Context) {
	st, ok := r.streamer()
	if !ok {
		return
	}
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	for i := range r.pages {
		p := &r.pages[i]
		if !p.held {
			continue
		}
		open := r.openCards(i)
		late := !time.Now().Before(r.holdUntil(*p))
		if open && !late && !done {
			continue
		}
		if open && !done {
			// Its cards stay where they started: the stream stops as
			// it stands and the message goes on by edits, its cards as
			// blocks, until each ends with its task (msgcards.go).
			r.keepCards(ctx, st, i)
			continue
		}
		p.held, p.streaming = false, false
		msg, ref := connectors.Message{Text: p.streamed}, p.ref
		r.bg.Go(func() {
			if err := st.StopStream(ctx, ref, msg); err != nil {
				r.log.Info("a rolled-over stream could not be stopped; the platform ends it", "channel", r.dest.Channel, "err", err)
			}
		})
	}
}
