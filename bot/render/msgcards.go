package render

import (
	"context"
	"slices"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// Cards in messages: the platform shows task cards in a message it posts
// or edits as well as in a stream (connectors.TaskMessenger, Slack's
// task_card blocks; a platform that cannot shows no cards: its commands
// are status lines), so an answer's cards live in the answer's own
// messages. A page that streams takes its cards in its stream's calls (the
// start's, the appends' with its text); a page that goes on by edits — it
// was posted because the platform's streams were busy, it opened with a
// status line, or the platform ended its stream — shows them in each of
// its edits (Message.Tasks), so a card costs no call of its own and no
// second message: an answer by edits is one message, its cards above its
// words. Its cards are those whose page it is (taskPage, cardPage's rule).

// messageCards takes the changed cards whose page goes on by edits out of
// those the streams send (taskDirty): that page's next edit shows them
// (pageCards). Their page's record has them as open first, while one may
// show open (cards_record.go).
func (r *Renderer) messageCards(ctx context.Context) {
	r.mu.Lock()
	dirty := slices.Clone(r.taskDirty)
	r.mu.Unlock()
	var mine []string
	pages := map[int]bool{}
	last := len(r.pages) - 1
	for _, id := range dirty {
		at, ok := r.taskPage[id]
		switch {
		case ok && at < last && r.pages[at].byEdits:
			// A held stream stopped at its lifetime keeps its cards
			// (keepCards).
		case !ok || at >= last || !r.pages[at].streaming:
			at = last // cardPage's rule, without placing a card bound for a stream
		}
		if r.pages[at].byEdits {
			if r.taskPage == nil {
				r.taskPage = map[string]int{}
			}
			r.taskPage[id] = at
			mine = append(mine, id)
			pages[at] = true
		}
	}
	if len(mine) == 0 {
		return
	}
	r.recordCards(ctx, pages, mine)
	r.mu.Lock()
	r.taskDirty = slices.DeleteFunc(r.taskDirty, func(id string) bool { return slices.Contains(mine, id) })
	r.mu.Unlock()
}

// unfinishedCard is the details of a card shown in a message when the
// answer ended before its task did (the turn stopped or failed).
const unfinishedCard = "not finished when the answer ended"

// pageCards are the cards page i shows in a message, as they stand: once
// the answer is done, one still open shows as ended in error.
func (r *Renderer) pageCards(i int) []connectors.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []connectors.Task
	for _, id := range r.taskOrder {
		if at, ok := r.taskPage[id]; ok && at == i {
			out = append(out, r.shownCard(id))
		}
	}
	return out
}

// newPageCards are the changed cards no page shows yet, for a page about
// to be posted or started: they go in its first call.
func (r *Renderer) newPageCards() []connectors.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []connectors.Task
	seen := map[string]bool{}
	for _, id := range r.taskDirty {
		if _, placed := r.taskPage[id]; placed || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, r.shownCard(id))
	}
	return out
}

// shownCard is task id's card as a message shows it; r.mu is held.
func (r *Renderer) shownCard(id string) connectors.Task {
	t := r.tasks[id]
	if r.done && taskOpen(t) {
		t.Status, t.Details = connectors.TaskError, unfinishedCard
	}
	return t
}

// placed notes that page i, just posted or started, shows cards: they
// are its cards now, and sent — but for one that changed meanwhile (its
// task ended while the page was being sent), which stays to be sent.
func (r *Renderer) placed(i int, cards []connectors.Task) {
	if len(cards) == 0 {
		return
	}
	if r.taskPage == nil {
		r.taskPage = map[string]int{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var sent []string
	for _, t := range cards {
		r.taskPage[t.ID] = i
		if r.shownCard(t.ID) == t {
			sent = append(sent, t.ID)
		}
	}
	r.taskDirty = slices.DeleteFunc(r.taskDirty, func(id string) bool { return slices.Contains(sent, id) })
}

// cardsFor is what page i's message shows of the cards, when it is sent
// as msg: a new page takes the cards no page shows yet; one going on by
// edits shows all of its own; a stream's go in its appends (sendTasks).
func (r *Renderer) cardsFor(i int) []connectors.Task {
	if _, ok := r.taskUpdater(); !ok {
		return nil
	}
	switch {
	case i == len(r.pages):
		return r.newPageCards()
	case r.pages[i].byEdits:
		return r.pageCards(i)
	}
	return nil
}

// recordMessageCards brings the record of each page going on by edits up
// to the cards it shows now: a card leaves it once shown ended.
func (r *Renderer) recordMessageCards(ctx context.Context) {
	if _, ok := r.taskUpdater(); !ok {
		return
	}
	pages := map[int]bool{}
	for i, p := range r.pages {
		if p.byEdits {
			pages[i] = true
		}
	}
	r.recordCards(ctx, pages, nil)
}

// keepCards stops held page i's stream at the end of its lifetime while
// a card of it is still open, and has the message go on by edits: the
// stop leaves its cards as they are and an edit shows them as blocks
// (the connector's StopStream with Tasks), each ending there with its
// task. One card from start to end, however long the task runs.
func (r *Renderer) keepCards(ctx context.Context, st connectors.Streamer, i int) {
	p := &r.pages[i]
	msg := connectors.Message{Text: p.streamed, Tasks: r.pageCards(i)}
	p.held, p.streaming, p.byEdits = false, false, true
	if err := st.StopStream(ctx, p.ref, msg); err != nil {
		r.log.Info("a held stream could not go on by edits; the next edit tries again", "channel", r.dest.Channel, "err", err)
		return
	}
	p.shown = pageKey(msg)
}

// recordOpening puts the open cards of a page about to be posted or
// started (its first call carries them) on its record, rid, before the
// call: a card is on record before it shows open (cards_record.go).
func (r *Renderer) recordOpening(ctx context.Context, rid int64, tasks []connectors.Task) {
	cr, ok := r.cardRecorder()
	if !ok || rid == 0 || len(tasks) == 0 {
		return
	}
	var open []store.OpenCard
	for _, t := range tasks {
		if taskOpen(t) {
			title := t.Title
			if r.red != nil {
				title = r.red.String(title)
			}
			open = append(open, store.OpenCard{ID: t.ID, Title: title})
		}
	}
	if len(open) == 0 {
		return
	}
	if err := cr.RecordCards(ctx, rid, open); err != nil {
		r.log.Warn("record an answer's open task cards", "channel", r.dest.Channel, "err", err)
		return
	}
	if r.cardsOnRecord == nil {
		r.cardsOnRecord = map[int64]string{}
	}
	r.cardsOnRecord[rid] = cardsKey(open)
}

// cardsByEdits reports whether the answer's last page goes on by edits
// that show cards: a flush with neither words nor a status line still
// edits it, for its cards (or a wait's line that went) may have changed.
func (r *Renderer) cardsByEdits() bool {
	_, ok := r.taskUpdater()
	return ok && len(r.pages) > 0 && r.pages[len(r.pages)-1].byEdits
}
