package render

import (
	"context"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// Open cards on record: a stream's task cards still pending or in
// progress are known to this process alone, and after a crash the
// platform would show them running for good. So each page's record
// (StreamRecorder) keeps its open cards, and recovery closes them in the
// stop that ends the cut stream. A card is on record before it is sent
// open, and leaves it only after it was sent ended: a crash in between
// has it closed as "not known", never left spinning. A page's record is
// written only when its set of open cards changes, at most twice a flush
// (before the cards are sent, after), however many cards changed.

// CardRecorder is a StreamRecorder that also keeps each stream's open
// task cards (*store.Sessions).
type CardRecorder interface {
	RecordCards(ctx context.Context, id int64, cards []store.OpenCard) error
}

// cardRecorder is the renderer's recorder's CardRecorder, when it has
// one.
func (r *Renderer) cardRecorder() (CardRecorder, bool) {
	if r.rec == nil {
		return nil, false
	}
	cr, ok := r.rec.(CardRecorder)
	return cr, ok
}

// recordCards records, for each page in pages, the cards it shows or is
// about to show open: a card pending or in progress, or one changed and
// not sent yet (in sending, or left dirty), whatever its status.
func (r *Renderer) recordCards(ctx context.Context, pages map[int]bool, sending []string) {
	cr, ok := r.cardRecorder()
	if !ok {
		return
	}
	for i := range pages {
		if i < 0 || i >= len(r.pages) || r.pages[i].recordID == 0 {
			continue
		}
		pg := &r.pages[i]
		id, open := pg.recordID, r.openOnPage(i, sending)
		key := cardsKey(open)
		if r.cardsOnRecord[id] == key {
			continue
		}
		if err := cr.RecordCards(ctx, id, open); err != nil {
			r.log.Warn("record an answer's open task cards", "channel", r.dest.Channel, "err", err)
			continue
		}
		if r.cardsOnRecord == nil {
			r.cardsOnRecord = map[int64]string{}
		}
		r.cardsOnRecord[id] = key
	}
}

// openOnPage is the cards page i may show open, their titles as shown
// (redacted).
func (r *Renderer) openOnPage(i int, sending []string) []store.OpenCard {
	r.mu.Lock()
	defer r.mu.Unlock()
	unsent := map[string]bool{}
	for _, id := range slices.Concat(sending, r.taskDirty) {
		unsent[id] = true
	}
	var out []store.OpenCard
	for _, id := range r.taskOrder {
		t := r.tasks[id]
		at, ok := r.taskPage[id]
		if !ok || at != i || (!taskOpen(t) && !unsent[id]) {
			continue
		}
		title := t.Title
		if r.red != nil {
			title = r.red.String(title)
		}
		out = append(out, store.OpenCard{ID: id, Title: title})
	}
	return out
}

// cardPages sorts the pages of the cards in ids, about to be sent: those
// where one is sent open (recorded before the sends), and those where one
// is sent ended (recorded after).
func (r *Renderer) cardPages(ids []string) (opening, ending map[int]bool) {
	opening, ending = map[int]bool{}, map[int]bool{}
	for _, id := range ids {
		at := r.cardPage(id)
		r.mu.Lock()
		t := r.tasks[id]
		r.mu.Unlock()
		if taskOpen(t) {
			opening[at] = true
		} else {
			ending[at] = true
		}
	}
	return opening, ending
}

// cardsKey tells one set of open cards from another.
func cardsKey(cards []store.OpenCard) string {
	var b strings.Builder
	for _, c := range cards {
		b.WriteString(c.ID + "\x00" + c.Title + "\x00")
	}
	return b.String()
}

// taskOpen reports whether t is still pending or in progress.
func taskOpen(t connectors.Task) bool {
	return t.Status != connectors.TaskComplete && t.Status != connectors.TaskError
}
