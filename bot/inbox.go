package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

// inbox holds the recorded events waiting for the router, in order: the
// front line (record, dedupe) puts each new one here, and one goroutine
// passes them, in that order, to the router's line (admit, route, queue).
type inbox struct {
	store eventLog
	// front records and dedupes an event; route acts on one recorded.
	front, route stage
	crew         *crew
	kick         func()
	log          *slog.Logger

	// rec makes an event's write and its place in the queue one step, so
	// that the queue is in the order of the records.
	rec sync.Mutex

	mu      sync.Mutex
	queue   []*work
	running bool
	closed  bool
	// held is set while Recover has queued what a previous process left
	// and Start has not yet let the router go: new events queue behind.
	held    bool
	started bool
}

// inboxRecord is an event as the inbox row keeps it: the neutral event,
// and what the bot itself adds.
type inboxRecord struct {
	connectors.Event
	JobEnd bool `json:"job_end,omitempty"`
}

// take is Handle: it passes ev through the front line within recordWait.
func (in *inbox) take(ctx context.Context, ev connectors.Event) error {
	ctx = context.WithoutCancel(ctx)
	// The write's statements end with the deadline: a write that only
	// gets the database after it records nothing. One that commits just
	// past it is acted on (see connectors.Handler for why that is safe).
	wctx, cancel := context.WithTimeout(ctx, recordWait)
	defer cancel()
	done := make(chan error, 1)
	if !in.crew.goOK(func() { done <- in.record(wctx, &work{ev: ev, ctx: ctx}) }) {
		return fmt.Errorf("%w: it is stopping", connectors.ErrNotRecorded)
	}
	select {
	case err := <-done:
		return err
	case <-wctx.Done():
		in.log.Error("an event was not taken: the database did not record it in time", "platform", ev.Platform, "wait", recordWait)
		return fmt.Errorf("%w: its database did not answer within %s", connectors.ErrNotRecorded, recordWait)
	}
}

// record passes w through the front line within wctx and queues it for
// the router (nil: it is on record, a platform's retry included).
func (in *inbox) record(wctx context.Context, w *work) error {
	in.rec.Lock()
	defer in.rec.Unlock()
	return in.front.Exec(wctx, w)
}

// enqueue is the front line's last stage: the work goes to the router.
func (in *inbox) enqueue(_ context.Context, w *work) error {
	in.push(w)
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

// replay queues, before anything new, every event a previous process
// recorded and did not hand to its work, on a platform served now (serves);
// Start lets the router go.
func (in *inbox) replay(ctx context.Context, serves func(platform string) bool) {
	open, err := in.store.OpenEvents(ctx)
	if err != nil {
		in.log.Error("read the events a previous run left", "err", err)
		return
	}
	in.hold()
	n := 0
	for _, e := range open {
		var rec inboxRecord
		if err := json.Unmarshal(e.Event, &rec); err != nil {
			in.log.Error("an event on record cannot be read; it is skipped", "id", e.ID, "err", err)
			in.finish(ctx, e.ID)
			continue
		}
		if !serves(rec.Platform) {
			continue // its platform is not configured now; kept for a start that has it
		}
		in.push(&work{ctx: context.Background(), ev: rec.Event, inboxID: e.ID, jobEnd: rec.JobEnd, notice: in.noticeOf(e)})
		n++
	}
	if n > 0 {
		in.log.Info("handling the events a previous run received and did not act on", "events", n)
	}
}

// queueJobEnd hands a job-end turn on record (inbox row id) to the router.
func (in *inbox) queueJobEnd(ev connectors.Event, id int64) {
	in.push(&work{ctx: context.Background(), ev: ev, inboxID: id, jobEnd: true})
}

// finish records that an inbox event was handed to its work.
func (in *inbox) finish(ctx context.Context, id int64) {
	if id == 0 {
		return
	}
	if err := in.store.FinishEvent(context.WithoutCancel(ctx), id); err != nil {
		in.log.Warn("mark an event handled", "id", id, "err", err)
	}
	in.kick()
}

// forget prunes the event ids older than kept.
func (in *inbox) forget(ctx context.Context, kept time.Duration) {
	if _, err := in.store.ForgetEventsBefore(ctx, time.Now().Add(-kept)); err != nil {
		in.log.Warn("forget old event ids", "err", err)
	}
}

// hold keeps the router from starting until release, unless Start ran.
func (in *inbox) hold() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.held = !in.started
}

// release lets the router go: Start.
func (in *inbox) release() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.started, in.held = true, false
	in.startLocked()
}

// push queues work and starts the router when it is idle.
func (in *inbox) push(w *work) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.queue = append(in.queue, w)
	in.startLocked()
}

func (in *inbox) startLocked() {
	if !in.running && !in.held && len(in.queue) > 0 {
		in.running = true
		in.crew.do(in.drain)
	}
}

// drain routes events until the inbox is empty. An event's inbox row is
// finished once the event is handed to its work: here, when no stage
// handed it on; or by the click's goroutine; or by the thread's worker as
// the message's turn begins.
func (in *inbox) drain() {
	for {
		in.mu.Lock()
		if len(in.queue) == 0 || in.closed {
			in.running, in.queue = false, nil
			in.mu.Unlock()
			return
		}
		w := in.queue[0]
		in.queue = in.queue[1:]
		in.mu.Unlock()
		if in.route.Exec(w.ctx, w); !w.handed {
			in.finish(w.ctx, w.inboxID)
		}
	}
}

// close drops what is queued and takes no more: the bot is shutting down.
// What was dropped is still open in the store, for the next start.
func (in *inbox) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
}
