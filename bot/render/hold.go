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
// holdMargin), a held stream is stopped all the same. Where messages show
// cards (msgcards.go), the message then goes on by edits, its open cards
// as blocks, and each ends there with its task: one card from start to
// end. Elsewhere a card still open ends saying its task goes on below
// (movedOn), and the task's card shows again in the answer's last stream,
// where it ends with the task's true status. A card starts only where its
// task's limit fits (cardlife.go), so only a task longer than that gets
// here.

// holdMargin is how long before the end of a stream's lifetime a held
// stream is stopped, its open cards moving on to the last stream.
const holdMargin = 10 * time.Second

// movedOn is the details of a held card whose stream had to stop while
// its task ran: the task's card goes on in the answer's later message.
const movedOn = "still running when this message had to stop: its end shows below"

// movedOnStatus is how such a card ends. Slack's task_update has four
// statuses (pending, in_progress, complete, error), and once its stream
// stops a card never changes again: left pending or in progress it would
// show the task running for good, long after it ended; error would say
// that a task failed that may well succeed (and people read a red card as
// the command failing). What has ended, truthfully, is this card's part:
// it watched the task as long as its message could. So it ends complete,
// its details saying the task was still running and where its end shows;
// the task's own status is on its card below, error included.
const movedOnStatus = connectors.TaskComplete

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
	if r.cards != nil && (first.IsZero() || r.holdUntil(*r.cards).Before(first)) {
		first = r.holdUntil(*r.cards) // the card stream's lifetime (cards.go)
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
// the answer is done. The open cards of a stream stopped early move on to
// the last page (movedOn).
func (r *Renderer) releaseHeld(ctx context.Context) {
	st, ok := r.streamer()
	if !ok {
		return
	}
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if r.cards != nil && !done && !time.Now().Before(r.holdUntil(*r.cards)) {
		r.moveOnCards(ctx)
	}
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
		if open && !done && r.msgCards() {
			// Its cards stay where they started: the stream stops as
			// it stands and the message goes on by edits, its cards as
			// blocks, until each ends with its task (msgcards.go).
			r.keepCards(ctx, st, i)
			continue
		}
		if open && !done {
			r.moveOn(ctx, i)
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

// moveOn ends the open cards of held page i as movedOn, and has them show
// again in the last page.
func (r *Renderer) moveOn(ctx context.Context, i int) {
	tu, _ := r.taskUpdater()
	r.mu.Lock()
	var open []connectors.Task
	for id, at := range r.taskPage {
		if t := r.tasks[id]; at == i && t.Status != connectors.TaskComplete && t.Status != connectors.TaskError {
			open = append(open, t)
		}
	}
	r.mu.Unlock()
	for _, t := range open {
		end := t
		end.Status, end.Details = movedOnStatus, movedOn
		if err := tu.UpdateTask(ctx, r.pages[i].ref, end); err != nil {
			r.log.Info("a held card could not be ended; the stop ends it", "channel", r.dest.Channel, "err", err)
		}
		delete(r.taskPage, t.ID)
		r.mu.Lock()
		r.taskDirty = append(r.taskDirty, t.ID)
		r.dirty = true
		r.mu.Unlock()
	}
}

// moveOnCards stops the card stream near the end of its lifetime, as
// releaseHeld stops a held stream: each card still open there ends as
// movedOn and shows again in the next card stream, where it ends with its
// task's true status; the stop carries no card still open.
func (r *Renderer) moveOnCards(ctx context.Context) {
	tu, _ := r.taskUpdater()
	r.mu.Lock()
	var open []connectors.Task
	for _, id := range r.taskOrder {
		if t := r.tasks[id]; r.cardsIn[id] && t.Status != connectors.TaskComplete && t.Status != connectors.TaskError {
			open = append(open, t)
		}
	}
	r.mu.Unlock()
	for _, t := range open {
		end := t
		end.Status, end.Details = movedOnStatus, movedOn
		if err := tu.UpdateTask(ctx, r.cards.ref, end); err != nil {
			r.log.Info("a card could not be ended before its stream's lifetime; the stop ends it", "channel", r.dest.Channel, "err", err)
		}
	}
	r.stopCards(ctx)
	r.mu.Lock()
	for _, t := range open {
		r.taskDirty = append(r.taskDirty, t.ID)
	}
	r.dirty = r.dirty || len(open) > 0
	r.mu.Unlock()
}
