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
// message's status line (waitLines). Only where no stream can start do
// the cards stay status lines.

// postedTasks finds the cards that changed a stream to show in when the
// answer's last message does not stream: the card stream, started here
// when there is none — in the background while the answer goes on, and
// waited for once it has ended (its last flush shows the cards). Where
// none can start, the cards become status lines.
func (r *Renderer) postedTasks(ctx context.Context) {
	if _, ok := r.taskUpdater(); !ok || len(r.pages) == 0 || r.pages[len(r.pages)-1].streaming || r.cards != nil {
		return
	}
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	switch {
	case !r.cardStream(ctx):
		r.tasksAsStatus()
	case done:
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
	r.startTakeOver(ctx)
	return r.rolling != nil
}

// waitLines shows the cards waiting for the card stream as status lines
// meanwhile (its Tier-2 start may wait while many answers run): a
// command shows at once, as a line, until its card does (useCards).
func (r *Renderer) waitLines() {
	r.mu.Lock()
	ids := slices.Clone(r.taskDirty)
	r.mu.Unlock()
	for _, id := range ids {
		r.mu.Lock()
		line, replace := taskLine(r.tasks[id]), r.statusTask == id
		shown := replace && len(r.status) > 0 && r.status[len(r.status)-1] == line
		r.statusTask = id
		r.mu.Unlock()
		if !shown {
			r.setStatus(line, replace, false)
		}
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
	if r.statusTask != "" && len(r.status) > 0 {
		// The line of a card that waited for the stream (waitLines) goes:
		// the card shows now.
		r.status, r.statusTask = r.status[:len(r.status)-1], ""
	}
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
