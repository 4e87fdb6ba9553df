package render

import (
	"context"
	"slices"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// The card stream: an answer whose last message does not stream — it
// began as a plain message (Slack's connector starts about one answer in
// three so when many run at once, spreading chat.startStream's Tier-2
// budget, and those answers go on by chat.update, the edits' own budget),
// or it opened with a status line, or the platform ended its stream —
// shows its task cards in a stream of their own, opened below that
// message at its first command. The answer's words go on by edits in the
// message above, so the answers still share both budgets; the stream
// holds only the cards, each ending with its task's true status, and
// stops when the answer ends. It starts in the background (roll.go's
// machinery) so that its Tier-2 start, spread over time as commands come,
// never holds up the answer's edits; while it starts, a card shows as the
// message's status line (waitLines). A start the platform refused for
// now (a rate limit: 429 and its Retry-After) is tried again once the
// wait is over, a few times, the cards showing as lines meanwhile: one
// busy moment does not leave the answer's commands as lines for good.
// Only where no stream can start do the cards stay status lines.

// postedTasks finds the cards that changed a stream to show in when the
// answer's last message does not stream: the card stream, started here
// when there is none — in the background while the answer goes on, and
// waited for once it has ended (its last flush shows the cards). Where
// none can start, the cards become status lines.
func (r *Renderer) postedTasks(ctx context.Context) {
	if _, ok := r.taskUpdater(); !ok || len(r.pages) == 0 || r.pages[len(r.pages)-1].streaming || r.cards != nil || r.msgCards() {
		return // (where messages show cards, the answer's own do: msgcards.go)
	}
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	switch {
	case !r.cardStream(ctx):
		r.tasksAsStatus()
	case done:
		if r.rolling == nil && !r.retryCards(ctx) {
			r.tasksAsStatus()
			return
		}
		r.awaitRoll(ctx) // takeOver: useCards
		if r.cards == nil {
			r.tasksAsStatus()
		}
	default:
		r.waitLines() // the cards wait for their stream
	}
}

// cardsWaiting reports whether task cards changed and wait to be shown.
func (r *Renderer) cardsWaiting() bool {
	if _, ok := r.taskUpdater(); !ok {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.taskDirty) > 0
}

// cardStream starts the card stream in the background, and reports
// whether the cards wait for it; not when one could not start before.
func (r *Renderer) cardStream(ctx context.Context) bool {
	if r.rolling != nil {
		return true
	}
	if !r.cardsWaiting() || r.cardsAsLines {
		return false
	}
	if time.Now().Before(r.cardsRetry) {
		return true // its start is tried again then (cardsRetryTimer)
	}
	r.startTakeOver(ctx)
	return r.rolling != nil
}

// cardStarts is how many times the card stream's start is tried while
// the platform asks to wait (rate limits) before the cards stay lines.
const cardStarts = 3

// cardStreamFailed handles a card stream that could not start: after a
// rate limit it is tried again once the platform's wait is over (at
// least an edit interval), up to cardStarts times; after any other
// refusal, or too many, the cards show as status lines.
func (r *Renderer) cardStreamFailed(err error) {
	wait, limited := connectors.RetryAfter(err)
	if r.cardsTries++; limited && r.cardsTries < cardStarts {
		r.log.Info("the stream for the answer's task cards must wait; trying again", "channel", r.dest.Channel, "wait", wait)
		r.cardsRetry = time.Now().Add(max(wait, r.limits.EditInterval))
		return
	}
	r.log.Warn("no stream for the answer's task cards; they show as status lines", "channel", r.dest.Channel, "err", err)
	r.cardsAsLines = true
}

// cardsRetryTimer fires when the card stream's start is due again; nil
// when none waits.
func (r *Renderer) cardsRetryTimer() <-chan time.Time {
	if r.cardsRetry.IsZero() || r.rolling != nil || r.cards != nil || r.cardsAsLines {
		return nil
	}
	return time.After(time.Until(r.cardsRetry))
}

// retryCards starts the card stream the answer waits to try again, once
// its wait is over: the answer has ended, and its cards still need it. It
// reports whether the start is under way.
func (r *Renderer) retryCards(ctx context.Context) bool {
	if r.cardsAsLines || !Sleep(ctx, time.Until(r.cardsRetry)) {
		return false
	}
	r.startTakeOver(ctx)
	return r.rolling != nil
}

// waitLines shows the cards waiting for the card stream as status lines
// meanwhile (its Tier-2 start may wait while many answers run): a
// command shows at once, as a line, until its card does (useCards). Each
// card has one line, replaced in place as its task changes: the lines of
// several commands do not push each other, or the answer's own status
// line, out of view.
func (r *Renderer) waitLines() {
	r.mu.Lock()
	changed := false
	if r.waitedLines == nil {
		r.waitedLines = map[string]string{}
	}
	for _, id := range r.taskDirty {
		line := taskLine(r.tasks[id])
		old, had := r.waitedLines[id]
		at := slices.Index(r.status, old)
		switch {
		case had && old == line && at >= 0:
			continue
		case had && at >= 0:
			r.status[at] = line
		case r.waiting && len(r.status) > 0:
			r.status[len(r.status)-1], r.waiting = line, false // a wait's line lasts until the next
		default:
			r.status = append(r.status, line)
		}
		r.waitedLines[id], changed = line, true
	}
	if len(r.status) > 3 {
		r.status = r.status[len(r.status)-3:]
	}
	if changed {
		r.settled, r.placeholding, r.dirty = r.text.Len(), false, true
	}
	r.mu.Unlock()
	if changed {
		r.poke()
	}
}

// useCards makes the stream that started (res) the card stream.
func (r *Renderer) useCards(ctx context.Context, res rolled) {
	r.stopCards(ctx) // one before it (a roll-over's stream, come once its page had ended)
	r.cards, r.cardsIn = &page{ref: res.ref, recordID: res.rid, streaming: true, started: time.Now()}, map[string]bool{}
	if r.rec != nil && res.rid != 0 {
		if err := r.rec.PostedStreaming(ctx, res.rid, res.ref.ID, ""); err == nil {
			r.cards.posted = true
		}
	}
	r.mu.Lock()
	// The lines of the cards that waited for the stream (waitLines) go:
	// the cards show now.
	r.status = slices.DeleteFunc(r.status, func(l string) bool {
		for _, w := range r.waitedLines {
			if l == w {
				return true
			}
		}
		return false
	})
	r.statusTask, r.waitedLines = "", nil
	r.dirty = true
	r.mu.Unlock()
}

// cardRef is the stream that shows task id's card, and its page: the
// card stream (page -1) once the card is there, or while the last page
// does not stream; else cardPage's.
func (r *Renderer) cardRef(id string) (connectors.Ref, int) {
	if r.cards != nil && (r.cardsIn[id] || !r.pages[len(r.pages)-1].streaming) {
		r.cardsIn[id] = true
		return r.cards.ref, -1
	}
	at := r.cardPage(id)
	return r.pages[at].ref, at
}

// endCards forgets the card stream, which the platform ended: the next
// card starts another.
func (r *Renderer) endCards(ctx context.Context) {
	if r.cards != nil {
		r.unreserve(ctx, r.cards.recordID)
	}
	r.cards, r.cardsIn = nil, nil
}

// stopCards stops the card stream once the answer has ended: a card
// still open ends as an error there (the connector's stop).
func (r *Renderer) stopCards(ctx context.Context) {
	st, ok := r.streamer()
	if !ok || r.cards == nil {
		return
	}
	if err := st.StopStream(ctx, r.cards.ref, connectors.Message{}); err != nil {
		r.log.Info("the answer's card stream could not be stopped; the platform ends it", "channel", r.dest.Channel, "err", err)
	}
	r.endCards(ctx)
}
