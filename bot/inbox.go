package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// The inbox: record, then acknowledge, then act (design §1.8). Handle
// writes each event to the store's inbox before it returns — the
// connector acknowledges the platform after that — and queues it for one
// goroutine that routes events in the order they were recorded. An event
// stays open in the store until it is handed to its work (a vote cast, a
// message's turn begun): what a crash, a stop or a deep queue leaves open
// is routed, once, by the next start (Recover loads it, Start lets it go).

// recordWait bounds how long Handle waits for the inbox write: a platform
// wants its ack within 3 s (Slack, Discord). An event whose write has not
// begun by then is not recorded, and Handle says so.
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
	// id is the event's inbox row; 0 for an event without a store (the
	// bot runs without one in some tests).
	id int64
	// jobEnd marks the turn a job's end asked for: no person's message,
	// so neither bot.access nor thread_replies apply to it.
	jobEnd bool
}

// inboxRecord is an event as the inbox row keeps it: the neutral event,
// and what the bot itself adds.
type inboxRecord struct {
	connectors.Event
	JobEnd bool `json:"job_end,omitempty"`
}

// Handle receives one event, as connectors.Handler: it records the event
// durably (a fast insert) and returns nil, doing no platform I/O; the
// work is done by goroutines the bot owns, in the order the events came.
// An event it could not record within recordWait it returns an error for
// (connectors.ErrNotRecorded), and does not act on.
func (b *Bot) Handle(ctx context.Context, ev connectors.Event) error {
	ctx = context.WithoutCancel(ctx)
	// The write's statements end with the deadline: a write that only
	// gets the database after it records nothing. One that commits just
	// past it is acted on (see connectors.Handler for why that is safe).
	wctx, cancel := context.WithTimeout(ctx, recordWait)
	defer cancel()
	done := make(chan error, 1)
	if !b.goAsyncOK(func() { done <- b.inbox.record(b, wctx, ctx, inboxItem{ctx: ctx, ev: ev}) }) {
		return fmt.Errorf("%w: it is stopping", connectors.ErrNotRecorded)
	}
	select {
	case err := <-done:
		return err
	case <-wctx.Done():
		b.log().Error("an event was not taken: the database did not record it in time", "platform", ev.Platform, "wait", recordWait)
		return fmt.Errorf("%w: its database did not answer within %s", connectors.ErrNotRecorded, recordWait)
	}
}

// record writes an event to the store's inbox within wctx and queues it
// for the router with ctx; a platform's retry of an event already
// recorded is dropped (nil: it is on record).
func (in *inbox) record(b *Bot, wctx, ctx context.Context, it inboxItem) error {
	in.rec.Lock()
	defer in.rec.Unlock()
	if b.Store != nil {
		data, err := json.Marshal(inboxRecord{Event: it.ev, JobEnd: it.jobEnd})
		if err != nil {
			return fmt.Errorf("%w: %v", connectors.ErrNotRecorded, err)
		}
		var first bool
		it.id, first, err = b.Store.RecordEvent(wctx, it.ev.Platform, it.ev.ID, data)
		if err != nil {
			b.log().Error("an event could not be recorded; it was not taken", "platform", it.ev.Platform, "err", err)
			return notRecorded(err)
		}
		if !first {
			b.Metrics.event(it.ev, true)
			return nil
		}
	}
	it.ctx = ctx
	in.push(b, it)
	return nil
}

// notRecorded is the Handler's error for a failed inbox write, in words:
// the store's own for a disk that refuses writes.
func notRecorded(err error) error {
	if u := (*store.Unavailable)(nil); errors.As(err, &u) {
		return fmt.Errorf("%w: %s", connectors.ErrNotRecorded, u.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: its database did not answer within %s", connectors.ErrNotRecorded, recordWait)
	}
	return fmt.Errorf("%w: its database refused the write (tell its operator if this persists)", connectors.ErrNotRecorded)
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
		var rec inboxRecord
		if err := json.Unmarshal(e.Event, &rec); err != nil {
			b.log().Error("an event on record cannot be read; it is skipped", "id", e.ID, "err", err)
			b.finishEvent(ctx, e.ID)
			continue
		}
		if _, ok := b.conn(rec.Platform); !ok {
			continue // its platform is not configured now; kept for a start that has it
		}
		b.inbox.push(b, inboxItem{ctx: context.Background(), ev: rec.Event, id: e.ID, jobEnd: rec.JobEnd})
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
	b.kickSettle()
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
