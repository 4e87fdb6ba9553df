package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// crew owns the bot's goroutines: each runs unless the bot is shutting
// down, and Close waits for all of them.
type crew struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	closed bool
}

// goOK runs fn on a goroutine the bot waits for, unless the bot is
// shutting down; it reports whether fn runs.
func (c *crew) goOK(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Go(fn)
	return true
}

func (c *crew) do(fn func()) { c.goOK(fn) }

// stop takes no more goroutines; wait waits for those running.
func (c *crew) stop() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *crew) wait() { c.wg.Wait() }

// queuedNote answers a message that waits behind the thread's running
// work.
const queuedNote = "queued: runs after the current answer"

// QueuedNote is the bot's answer to a message that waits behind its
// thread's running work: a front that sends the next line only once the
// last answer is finished (the terminal) may hide it.
const QueuedNote = queuedNote

// threadID names a conversation.
type threadID struct{ platform, channel, thread string }

func (t threadID) String() string { return t.platform + "/" + t.channel + "/" + t.thread }

func parseThreadID(s string) (threadID, bool) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 {
		return threadID{}, false
	}
	return threadID{parts[0], parts[1], parts[2]}, true
}

func threadOf(ev connectors.Event) threadID {
	return threadID{ev.Platform, ev.Channel, ev.Thread}
}

// thread is one conversation's queue and its running turn.
type thread struct {
	id      threadID
	queue   []queued
	running bool
	// slot is set while the thread holds one of the bot's turn slots.
	slot bool
	// owner is who asked for the running work: they may stop it, as may
	// an approver.
	owner string
	// cancel stops the running turn; the cause tells a person's Stop (nil)
	// from a shutdown (agent.ErrShutdown).
	cancel context.CancelCauseFunc
	// held is set while the thread's turn is an alert's investigation.
	held bool
}

// queued is a message waiting for its turn, or the follow-up of a decided
// approval that no running turn waits for (a restart came in between):
// followUp is then the approval's id.
type queued struct {
	ev       connectors.Event
	followUp string
	// inboxID is the message's inbox row, finished as its turn begins: a
	// message still queued at a stop or a crash is routed again by the
	// next start.
	inboxID int64
	// jobEnd: the turn a job's end asked for; never turned away.
	jobEnd bool
	// replayed: a previous process took the message and told its thread
	// what it waited for; it is not told again.
	replayed bool
	// notice is the queued notice a previous process posted for it.
	notice *connectors.Ref
	// hold: the thread's turn is handed to work outside the bot (an
	// alert's investigation, threads.hold).
	hold *holding
	// signed is closed once the platform showed the question is taken
	// (signs.go); nil for work that gets no sign.
	signed chan struct{}
}

// threads keeps each thread's queue and runs it, one piece of work at a
// time, on a worker of its own once the thread holds a turn slot: the
// queue stage puts work here, and each worker passes it to the session,
// turn, render and finish stages (run, then finish).
type threads struct {
	cfg   Config
	crew  *crew
	slots *turnSlots
	// board tells the threads that wait for a slot where they are.
	board *queueBoard
	// run takes a piece of work from session to render; finish ends it,
	// whatever the others did.
	run, finish stage
	// begun records that a piece of work's inbox row is handed to its
	// turn; out tells a thread its work was stopped before it began.
	begun func(ctx context.Context, inboxID int64)
	// keepNotice records a queued notice on its message's inbox row.
	keepNotice func(ctx context.Context, inboxID int64, ref connectors.Ref)
	out        *Platforms

	mu     sync.Mutex
	byID   map[threadID]*thread
	closed bool
}

func newThreads(cfg Config, c *crew, out *Platforms) *threads {
	cfg = cfg.WithDefaults()
	slots := newTurnSlots(cfg.MaxTurns)
	return &threads{cfg: cfg, crew: c, slots: slots, board: newQueueBoard(slots, out, c), out: out, byID: map[threadID]*thread{}}
}

// enqueue adds work to a thread and starts its worker if idle. It reports
// whether the work waits behind other work, whether it was queued at all
// (not while the bot shuts down), and why a person's message was not
// taken (the bot is full: see Full). A follow-up already queued is not
// queued twice; a follow-up is never turned away (its approval is
// decided, and the thread must hear what came of it), nor is a job-end
// turn (the job's notice is posted, and its turn is on record).
func (ts *threads) enqueue(id threadID, q queued) (behind, ok bool, full string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return false, false, ""
	}
	if q.followUp == "" && !q.jobEnd {
		if full = ts.fullLocked(id); full != "" {
			return false, false, full
		}
	}
	t := ts.byID[id]
	if t == nil {
		t = &thread{id: id}
		ts.byID[id] = t
	}
	if q.followUp != "" && slices.ContainsFunc(t.queue, func(o queued) bool { return o.followUp == q.followUp }) {
		return true, true, ""
	}
	behind = t.running
	q.signed = ts.acknowledge(q)
	t.queue = append(t.queue, q)
	if !t.running {
		t.running = true
		ts.crew.do(func() { ts.work(t) })
	}
	return behind, true, ""
}

// work runs a thread's queue until it is empty.
func (ts *threads) work(t *thread) {
	for {
		ts.mu.Lock()
		t.held = false
		if len(t.queue) == 0 || ts.closed {
			dropHolds(t.queue)
			// An idle thread keeps nothing in memory: its state is in
			// the store, and the next message makes a fresh entry.
			t.running, t.queue, t.cancel = false, nil, nil
			if ts.byID[t.id] == t {
				delete(ts.byID, t.id)
			}
			ts.mu.Unlock()
			return
		}
		q := t.queue[0]
		t.queue = t.queue[1:]
		if q.hold != nil {
			t.cancel, t.owner, t.held = q.hold.stop, "", true
			ts.mu.Unlock()
			q.hold.serve()
			continue
		}
		ctx, cancel := stoppable()
		// The thread's commands carry its name, so that one a crash cuts
		// off can be told about there after the restart.
		ctx = hosts.WithLabel(ctx, t.id.String())
		t.cancel, t.owner = cancel, q.ev.User.ID
		ts.mu.Unlock()

		w := &work{ev: q.ev, inboxID: q.inboxID, jobEnd: q.jobEnd, followUp: q.followUp}
		if ts.inSlot(ctx, t, q) {
			ts.run.Exec(withRequester(ctx, q.ev), w)
			ts.setSlot(t, false)
			ts.slots.release()
		}
		ts.finish.Exec(ctx, w)
		ts.signDone(q)
		cancel(nil)
	}
}

// inSlot waits until the thread holds a turn slot, and reports whether it
// does. A thread that must wait is told at once where it is in line, with
// a Stop button (queueBoard). Work stopped or shut down while it waited
// for its slot did not start: a person's stop is told in the thread (and
// the event is done); a shutdown leaves the event in the inbox, for the
// next start.
func (ts *threads) inSlot(ctx context.Context, t *thread, q queued) bool {
	if place := ts.slots.join(); place != nil {
		notice := ts.noticeFor(ctx, q, place)
		if ts.slots.wait(ctx, place) != nil {
			ts.notStarted(ctx, q, notice)
			return false
		}
		ts.board.end(ctx, notice, queuedStartedText)
	} else if q.notice != nil {
		ts.board.end(ctx, &queuedNotice{ev: q.ev, ref: *q.notice}, queuedStartedText)
	}
	ts.setSlot(t, true)
	// Its turn begins now: a crash from here on is the turn's to
	// recover (interrupted, never re-run), not the inbox's.
	ts.begun(ctx, q.inboxID)
	return true
}

// notStarted tells the thread of work stopped while it waited for its
// slot, in its queued notice if it has one: a person's stop ends it (the
// event is done); a shutdown leaves it for the next start.
func (ts *threads) notStarted(ctx context.Context, q queued, notice *queuedNotice) {
	var stop approvals.StoppedBy
	if !errors.As(context.Cause(ctx), &stop) {
		ts.board.end(ctx, notice, queuedRestartText)
		return
	}
	ts.begun(ctx, q.inboxID)
	text := fmt.Sprintf("Stopped by @%s before it started; nothing ran.", stop.Name)
	if notice == nil {
		ts.out.reply(ts.out.lifeCtx(ctx), q.ev, text)
		return
	}
	ts.board.end(ctx, notice, text)
}

func (ts *threads) setSlot(t *thread, held bool) {
	ts.mu.Lock()
	t.slot = held
	ts.mu.Unlock()
}

// stop cancels a thread's running turn on behalf of by; it reports
// whether one ran.
func (ts *threads) stop(id threadID, by approvals.StoppedBy) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil || !t.running || t.cancel == nil {
		return false
	}
	t.cancel(by)
	return true
}

// owner is who asked for the work running in thread id, or "".
func (ts *threads) owner(id threadID) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.byID[id]; t != nil && t.running {
		return t.owner
	}
	return ""
}

// busy reports whether thread id has work running or queued.
func (ts *threads) busy(id threadID) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	_, ok := ts.byID[id]
	return ok
}

// close cancels every running turn for a shutdown and takes no more work.
func (ts *threads) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	for _, t := range ts.byID {
		if t.cancel != nil {
			t.cancel(errShutdown)
		}
	}
}
