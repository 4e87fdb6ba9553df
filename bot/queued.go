package bot

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// queueBoard keeps the notices of the threads that wait for a turn slot
// (bot.max_turns): each says at once how many threads are ahead of it,
// with a Stop button, and is edited as the line moves. One goroutine
// edits them, one notice at a time, the one nearest the front first, and
// paced (noticeGap): when the line moves faster than the platform takes
// edits, a notice skips the numbers it had no turn to show, and the
// answers' own edits keep most of the workspace's budget.
type queueBoard struct {
	slots *turnSlots
	out   *Platforms
	crew  *crew

	mu       sync.Mutex
	notices  map[*queuedNotice]bool
	running  bool      // the editing goroutine runs
	lastEdit time.Time // of any notice: the board's pace
	kick     chan struct{}
}

// queuedNotice is one waiting thread's notice.
type queuedNotice struct {
	place chan struct{} // the thread's place in the slots' line
	ev    connectors.Event
	ref   connectors.Ref

	// mu orders the edits of the message: the board's last edit cannot
	// land after the one that ends it.
	mu     sync.Mutex
	closed bool      // its turn started, or it was stopped
	edited time.Time // its last post or edit: one message's pace
	// shown is the number it shows (read by the board without mu).
	shown atomic.Int64
}

func newQueueBoard(slots *turnSlots, out *Platforms, c *crew) *queueBoard {
	b := &queueBoard{slots: slots, out: out, crew: c, notices: map[*queuedNotice]bool{}, kick: make(chan struct{}, 1)}
	slots.moved = b.poke
	return b
}

// poke wakes the editing goroutine; it never blocks.
func (b *queueBoard) poke() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// queuedText is what a notice says with n threads ahead.
func queuedText(n int) string {
	if n == 0 {
		return "queued: next in line; it starts when a running answer ends"
	}
	return fmt.Sprintf("queued: %d ahead; it starts when a running answer ends", n)
}

// queuedStartedText replaces a notice once its turn starts.
const queuedStartedText = "started (it was queued)"

// queuedRestartText replaces a notice when opsbot stops while the work
// waits: the next start runs it, and does not post a new notice.
const queuedRestartText = "queued: opsbot is restarting; it runs after the restart"

func queuedMessage(ev connectors.Event, n int) connectors.Message {
	return connectors.Message{Text: queuedText(n), Buttons: []connectors.Button{
		{ActionID: ActionStop, Value: threadOf(ev).String(), Label: "Stop", Style: connectors.StyleDanger}}}
}

// post tells ev's thread at once that its work waits at place, and keeps
// the notice up to date until end; nil when it could not be posted.
func (b *queueBoard) post(ctx context.Context, ev connectors.Event, place chan struct{}) *queuedNotice {
	n := b.slots.ahead(place)
	if n < 0 {
		return nil // given its slot already
	}
	ref, err := b.out.post(b.out.lifeCtx(ctx), destOf(ev), queuedMessage(ev, n))
	if err != nil {
		b.out.log.Warn("post queued notice", "channel", ev.Channel, "err", err)
		return nil
	}
	qn := &queuedNotice{place: place, ev: ev, ref: ref, edited: time.Now()}
	qn.shown.Store(int64(n))
	b.follow(ctx, qn)
	return qn
}

// follow keeps qn up to date until end.
func (b *queueBoard) follow(ctx context.Context, qn *queuedNotice) {
	b.mu.Lock()
	b.notices[qn] = true
	start := !b.running
	b.running = b.running || b.crew.goOK(func() { b.edits(b.out.lifeCtx(ctx)) })
	b.mu.Unlock()
	if !start {
		b.poke()
	}
}

// end replaces the notice with text, without its button: the turn started,
// or was stopped before it did. A nil notice is none.
func (b *queueBoard) end(ctx context.Context, qn *queuedNotice, text string) {
	if qn == nil {
		return
	}
	b.mu.Lock()
	delete(b.notices, qn)
	b.mu.Unlock()
	b.poke()
	qn.mu.Lock()
	qn.closed = true // the board edits it no more
	edited := qn.edited
	qn.mu.Unlock()
	c, ok := b.out.conn(qn.ref.Platform)
	if !ok {
		return
	}
	ctx = b.out.lifeCtx(ctx)
	if !render.Sleep(ctx, time.Until(edited.Add(c.Limits().EditInterval))) || b.out.budget(qn.ref.Platform, qn.ref.Workspace).Wait(ctx) != nil {
		return
	}
	if err := editRetrying(ctx, c, qn.ref, connectors.Message{Text: text}); err != nil {
		b.out.log.Warn("end queued notice", "channel", qn.ref.Channel, "err", err)
	}
}

// edits brings the notices up to date, one at a time, until none is left.
func (b *queueBoard) edits(ctx context.Context) {
	for {
		qn, quit := b.stale()
		if quit {
			return
		}
		if qn == nil {
			select {
			case <-b.kick:
				continue
			case <-ctx.Done():
				b.quit()
				return
			}
		}
		if !b.edit(ctx, qn) {
			b.quit()
			return
		}
	}
}

// stale is the notice nearest the front whose number is out of date, or
// nil; quit says there is no notice left (and the goroutine ends).
func (b *queueBoard) stale() (qn *queuedNotice, quit bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.notices) == 0 {
		b.running = false
		return nil, true
	}
	best := -1
	for n := range b.notices {
		ahead := b.slots.ahead(n.place)
		if ahead >= 0 && ahead != int(n.shown.Load()) && (best < 0 || ahead < best) {
			qn, best = n, ahead
		}
	}
	return qn, false
}

func (b *queueBoard) quit() {
	b.mu.Lock()
	b.running = false
	b.mu.Unlock()
}

// edit shows qn's place now, at the board's pace and within the
// workspace's edit budget; false when ctx ended.
func (b *queueBoard) edit(ctx context.Context, qn *queuedNotice) bool {
	c, ok := b.out.conn(qn.ref.Platform)
	if !ok { // its platform is gone: nothing to edit
		b.mu.Lock()
		delete(b.notices, qn)
		b.mu.Unlock()
		return true
	}
	b.mu.Lock()
	next := b.lastEdit.Add(noticeGap(c.Limits()))
	b.mu.Unlock()
	qn.mu.Lock()
	if own := qn.edited.Add(c.Limits().EditInterval); own.After(next) {
		next = own
	}
	qn.mu.Unlock()
	if !render.Sleep(ctx, time.Until(next)) || b.out.budget(qn.ref.Platform, qn.ref.Workspace).Wait(ctx) != nil {
		return false
	}
	b.show(ctx, c, qn)
	b.mu.Lock()
	b.lastEdit = time.Now()
	b.mu.Unlock()
	return true
}

// show edits qn to its place in the line now (it moved during the
// board's waits), unless its turn started meanwhile.
func (b *queueBoard) show(ctx context.Context, c connectors.Connector, qn *queuedNotice) {
	qn.mu.Lock()
	defer qn.mu.Unlock()
	ahead := b.slots.ahead(qn.place)
	if qn.closed || ahead < 0 {
		return
	}
	if err := retryLimited(ctx, func() error { return c.Edit(ctx, qn.ref, queuedMessage(qn.ev, ahead)) }); err != nil {
		b.out.log.Warn("edit queued notice", "channel", qn.ref.Channel, "err", err)
	}
	qn.shown.Store(int64(ahead))
	qn.edited = time.Now()
}

// noticeGap is the least time between two edits of queued notices: half
// of a workspace's shared edit budget at most (the answers being written
// keep the rest), and never faster than one message may be edited.
func noticeGap(l connectors.Limits) time.Duration {
	gap := l.EditInterval
	if l.EditsPerMinute > 0 {
		gap = max(gap, 2*time.Minute/time.Duration(l.EditsPerMinute))
	}
	return gap
}
