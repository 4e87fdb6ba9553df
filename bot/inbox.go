package bot

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// The inbox: record, then acknowledge, then act (design §1.8). Handle
// writes each event to the store's inbox before it returns — the
// connector acknowledges the platform after that — and queues it for one
// goroutine that routes events in the order they were recorded. An event
// stays open in the store until it is handed to its work (a vote cast, a
// message's turn begun): what a crash, a stop or a deep queue leaves open
// is routed, once, by the next start (Recover loads it, Start lets it go).

// recordWait bounds how long Handle waits for the inbox write: a platform
// wants its ack within 3 s (Slack, Discord). An event whose write takes
// longer (a database locked by another writer) is queued once written,
// and is acknowledged before it is on record.
const recordWait = 2 * time.Second

// inbox holds the recorded events waiting for the router, in order.
type inbox struct {
	// rec makes an event's write and its place in the queue one step, so
	// that the queue is in the order of the records.
	rec sync.Mutex

	mu      sync.Mutex
	queue   []inboxItem
	running bool
	closed  bool
	// held is set while Recover has queued what a previous process left
	// and Start has not yet let the router go: new events queue behind.
	held    bool
	started bool
}

type inboxItem struct {
	ctx context.Context
	ev  connectors.Event
	// id is the event's inbox row; 0 when it could not be written (the
	// event is then handled from memory, and dropped retries are told
	// apart by SeenEvent).
	id int64
}

// Handle receives one event, as connectors.Handler: it records the event
// durably (a fast insert) and returns, doing no platform I/O; the work is
// done by goroutines the bot owns, in the order the events came. A write
// that does not finish within recordWait goes on in the background.
func (b *Bot) Handle(ctx context.Context, ev connectors.Event) {
	ctx = context.WithoutCancel(ctx)
	done := make(chan struct{})
	if !b.goAsyncOK(func() { defer close(done); b.inbox.record(b, ctx, ev) }) {
		return // shutting down: the platform's retry, or the next start, has it
	}
	t := time.NewTimer(recordWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		b.log().Warn("an event is acknowledged before it is on record: the database did not take it in time",
			"platform", ev.Platform, "wait", recordWait)
	}
}

// record writes ev to the store's inbox and queues it; a platform's retry
// of an event already recorded is dropped.
func (in *inbox) record(b *Bot, ctx context.Context, ev connectors.Event) {
	in.rec.Lock()
	defer in.rec.Unlock()
	it := inboxItem{ctx: ctx, ev: ev}
	if b.Store != nil {
		data, err := json.Marshal(ev)
		if err == nil {
			var first bool
			it.id, first, err = b.Store.RecordEvent(ctx, ev.Platform, ev.ID, data)
			if err == nil && !first {
				b.Metrics.event(ev, true)
				return
			}
		}
		if err != nil {
			b.log().Error("an event could not be recorded: it is handled, but a crash now would lose it", "platform", ev.Platform, "err", err)
		}
	}
	in.push(b, it)
}

// replayInbox queues, before anything new, every event a previous process
// recorded and did not hand to its work; Start lets the router go.
func (b *Bot) replayInbox(ctx context.Context) {
	open, err := b.Store.OpenEvents(ctx)
	if err != nil {
		b.log().Error("read the events a previous run left", "err", err)
		return
	}
	b.inbox.hold()
	n := 0
	for _, e := range open {
		var ev connectors.Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			b.log().Error("an event on record cannot be read; it is skipped", "id", e.ID, "err", err)
			b.finishEvent(ctx, e.ID)
			continue
		}
		if _, ok := b.conn(ev.Platform); !ok {
			continue // its platform is not configured now; kept for a start that has it
		}
		b.inbox.push(b, inboxItem{ctx: context.Background(), ev: ev, id: e.ID})
		n++
	}
	if n > 0 {
		b.log().Info("handling the events a previous run received and did not act on", "events", n)
	}
}

// finishEvent records that an inbox event was handed to its work.
func (b *Bot) finishEvent(ctx context.Context, id int64) {
	if id == 0 {
		return
	}
	if err := b.Store.FinishEvent(context.WithoutCancel(ctx), id); err != nil {
		b.log().Warn("mark an event handled", "id", id, "err", err)
	}
}

// hold keeps the router from starting until release, unless Start ran.
func (in *inbox) hold() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.held = !in.started
}

// release lets the router go: Start.
func (in *inbox) release(b *Bot) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.started, in.held = true, false
	in.startLocked(b)
}

// push queues an event and starts the router when it is idle.
func (in *inbox) push(b *Bot, it inboxItem) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.queue = append(in.queue, it)
	in.startLocked(b)
}

func (in *inbox) startLocked(b *Bot) {
	if !in.running && !in.held && len(in.queue) > 0 {
		in.running = true
		b.goAsync(func() { in.drain(b) })
	}
}

// drain routes events until the inbox is empty.
func (in *inbox) drain(b *Bot) {
	for {
		in.mu.Lock()
		if len(in.queue) == 0 || in.closed {
			in.running, in.queue = false, nil
			in.mu.Unlock()
			return
		}
		it := in.queue[0]
		in.queue = in.queue[1:]
		in.mu.Unlock()
		b.route(it)
	}
}

// close drops what is queued and takes no more: the bot is shutting down.
// What was dropped is still open in the store, for the next start.
func (in *inbox) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
}
