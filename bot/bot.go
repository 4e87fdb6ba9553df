package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// Bot routes chat events: each thread is a session; its messages run one at
// a time (later ones queue); deterministic commands answer without the
// model; everything else is an agent turn streamed into the thread.
type Bot struct {
	Store Store
	// Agent answers free text; nil when no model is configured.
	Agent *agent.Agent
	// Guard is the one path from a chat command to a host.
	Guard *approvals.Guard
	Jobs  *hosts.Jobs
	Gate  *approvals.Gate
	// Hosts lists the inventory for `hosts`.
	Hosts  []agent.HostInfo
	Config Config
	Log    *slog.Logger
	// NoAgentHelp says how to turn the agent on.
	NoAgentHelp string
	// Health runs and lists the scheduled health checks for `health`; nil
	// when none are configured.
	Health Health
	// CancelOnNewMessage makes a new message in a thread stop the running
	// turn instead of queueing behind it.
	CancelOnNewMessage bool
	// Redactor is the one redactor every message posted passes (nil: one
	// with the default rules and no own secrets).
	Redactor *redact.Redactor
	// Sweeper, when set, ends at start-up what a crashed process left
	// running (see executor.ProcessLedger).
	Sweeper Sweeper
	// JobEndTurns runs a short agent turn in a job's thread when the job
	// ends (agent.on_job_end: turn), rather than only posting the news.
	JobEndTurns bool
	// Metrics counts events, turns and the gaps between an answer's
	// visible updates (nil: nothing is counted).
	Metrics *Metrics

	// EventsKept is how long event ids are kept to drop platform retries
	// (default 3 days).
	EventsKept time.Duration
	// ShutdownGrace is how long Close lets answers show their last words
	// before it cuts every platform request and wait (default 10s).
	ShutdownGrace time.Duration

	mu      sync.Mutex
	conns   map[string]connectors.Connector
	budgets map[budgetKey]*EditBudget
	threads map[threadID]*thread
	inbox   inbox
	settle  settleWatch
	// slots bound the threads running work at once (bot.max_turns).
	slots  *turnSlots
	wg     sync.WaitGroup
	closed bool
	// life is the context of every request to a platform; Close ends it
	// once the grace has passed.
	life    context.Context
	endLife context.CancelFunc
}

// budgetKey names one workspace of one platform: edit budgets are per
// workspace (Slack's chat.update limit is).
type budgetKey struct{ platform, workspace string }

// queuedNote answers a message that waits behind the thread's running
// work.
const queuedNote = "queued: runs after the current answer"

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
}

// AddConnector registers a platform; its events reach Handle.
func (b *Bot) AddConnector(c connectors.Connector) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.initLocked()
	if b.Redactor == nil {
		b.Redactor = redact.New()
	}
	b.conns[c.Name()] = &redactedConn{Connector: c, red: b.Redactor}
}

// initLocked makes the maps and the life context; b.mu is held.
func (b *Bot) initLocked() {
	if b.conns == nil {
		b.conns, b.budgets, b.threads = map[string]connectors.Connector{}, map[budgetKey]*EditBudget{}, map[threadID]*thread{}
		b.life, b.endLife = context.WithCancel(context.Background())
		b.slots = newTurnSlots(b.Config.WithDefaults().MaxTurns)
	}
}

// platformNames are the platforms the bot posts to, sorted.
func (b *Bot) platformNames() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.conns))
}

func (b *Bot) conn(platform string) (connectors.Connector, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.conns[platform]
	return c, ok
}

// budget is the edit budget of one workspace of a platform.
func (b *Bot) budget(platform, workspace string) *EditBudget {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := budgetKey{platform, workspace}
	bu := b.budgets[k]
	if bu == nil {
		perMinute := 0
		if c, ok := b.conns[platform]; ok {
			perMinute = c.Limits().EditsPerMinute
		}
		bu = NewEditBudget(perMinute)
		b.budgets[k] = bu
	}
	return bu
}

// lifeCtx is the context of requests to platforms, with ctx's values.
func (b *Bot) lifeCtx(ctx context.Context) context.Context {
	b.mu.Lock()
	b.initLocked()
	life := b.life
	b.mu.Unlock()
	return valuesOf{Context: life, values: ctx}
}

// valuesOf is a context that ends with its Context and has the values of
// another (a request's trace ids, say).
type valuesOf struct {
	context.Context
	values context.Context
}

func (v valuesOf) Value(key any) any { return v.values.Value(key) }

// route acts on one event from the inbox. The event's inbox row is
// finished once the event is handed to its work: here, or by the vote's
// goroutine, or by the thread's worker as the message's turn begins.
func (b *Bot) route(it inboxItem) {
	ctx, ev := it.ctx, it.ev
	if it.jobEnd {
		// A job's end asked for this turn: no person's message to check.
		// Not queued while shutting down: the next start has it.
		b.enqueue(threadOf(ev), queued{ev: ev, inboxID: it.id, jobEnd: true})
		return
	}
	b.Metrics.event(ev, false)
	if !b.dispatch(ctx, ev, it.id) {
		b.finishEvent(ctx, it.id)
	}
}

// dispatch hands an event to its work; it reports whether that work
// finishes the event's inbox row (id) itself.
func (b *Bot) dispatch(ctx context.Context, ev connectors.Event, id int64) (handed bool) {
	switch ev.Kind {
	case connectors.EventAction:
		if !b.Config.allowed(ev.Channel, ev.User.ID) {
			// The same rule as for messages: a button is no way around it.
			b.goAsync(func() {
				respond(b.lifeCtx(ctx), b, ev, "You may not use opsbot in this channel; ask an admin to add you to bot.access.")
			})
			return false
		}
		// The click is done once its vote is: a crash before then
		// leaves it open, for the next start.
		return b.goAsyncOK(func() {
			b.action(b.lifeCtx(ctx), ev)
			b.finishEvent(ctx, id)
		})
	case connectors.EventMessage:
		if !b.forBot(ctx, ev) {
			return false
		}
		if !b.Config.allowed(ev.Channel, ev.User.ID) {
			if !ev.Mention {
				return false // people may talk in the thread without the bot
			}
			b.goAsync(func() {
				b.reply(b.lifeCtx(ctx), ev, fmt.Sprintf("Sorry %s, you may not use opsbot in this channel; ask an admin to add you to bot.access.", ev.User.Name))
			})
			return false
		}
		if isStop(ev.Text) {
			if why := b.stopRefusal(threadOf(ev), ev); why != "" {
				b.goAsync(func() { b.reply(b.lifeCtx(ctx), ev, why) })
				return false
			}
			b.stopTurn(threadOf(ev), stopperOf(ev))
			return false
		}
		if b.CancelOnNewMessage {
			b.stopTurn(threadOf(ev), stopperOf(ev))
		}
		behind, queuedOK, full := b.enqueue(threadOf(ev), queued{ev: ev, inboxID: id})
		switch {
		case full != "":
			// Turned away, and told so: never dropped in silence.
			b.goAsync(func() { b.reply(b.lifeCtx(ctx), ev, "Not taken: "+full+".") })
		case behind:
			b.goAsync(func() { b.reply(b.lifeCtx(ctx), ev, queuedNote) })
		}
		return queuedOK
	}
	return false
}

// forBot reports whether a message is for the bot: a mention is; under
// bot.thread_replies: addressed, so is a message in a thread where the bot
// has a session (or work queued), unless it mentions someone else.
func (b *Bot) forBot(ctx context.Context, ev connectors.Event) bool {
	if ev.Mention {
		return true
	}
	if ev.MentionsOthers || b.Config.WithDefaults().ThreadReplies != ThreadRepliesAddressed {
		return false
	}
	id := threadOf(ev)
	b.mu.Lock()
	_, busy := b.threads[id]
	b.mu.Unlock()
	if busy {
		return true
	}
	has, err := b.Store.HasSession(ctx, store.ThreadKey{Platform: id.platform, Workspace: ev.Workspace, Channel: id.channel, Thread: id.thread})
	if err != nil {
		b.log().Error("look up the thread's session", "err", err)
	}
	return has
}

func threadOf(ev connectors.Event) threadID {
	return threadID{ev.Platform, ev.Channel, ev.Thread}
}

// enqueue adds work to a thread and starts its worker if idle. It reports
// whether the work waits behind other work, whether it was queued at all
// (not while the bot shuts down), and why a person's message was not
// taken (the bot is full: see Full). A follow-up already queued is not
// queued twice; a follow-up is never turned away (its approval is
// decided, and the thread must hear what came of it), nor is a job-end
// turn (the job's notice is posted, and its turn is on record).
func (b *Bot) enqueue(id threadID, q queued) (behind, ok bool, full string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false, false, ""
	}
	b.initLocked()
	if q.followUp == "" && !q.jobEnd {
		if full = b.fullLocked(id); full != "" {
			return false, false, full
		}
	}
	t := b.threads[id]
	if t == nil {
		t = &thread{id: id}
		b.threads[id] = t
	}
	if q.followUp != "" && slices.ContainsFunc(t.queue, func(o queued) bool { return o.followUp == q.followUp }) {
		return true, true, ""
	}
	behind = t.running
	t.queue = append(t.queue, q)
	if !t.running {
		t.running = true
		b.wg.Go(func() { b.work(t) })
	}
	return behind, true, ""
}

// work runs a thread's queue until it is empty.
func (b *Bot) work(t *thread) {
	for {
		b.mu.Lock()
		if len(t.queue) == 0 || b.closed {
			// An idle thread keeps nothing in memory: its state is in
			// the store, and the next message makes a fresh entry.
			t.running, t.queue, t.cancel = false, nil, nil
			if b.threads[t.id] == t {
				delete(b.threads, t.id)
			}
			b.mu.Unlock()
			return
		}
		q := t.queue[0]
		t.queue = t.queue[1:]
		ctx, cancel := context.WithCancelCause(context.Background())
		// The thread's commands carry its name, so that one a crash cuts
		// off can be told about there after the restart.
		ctx = hosts.WithLabel(ctx, t.id.String())
		t.cancel, t.owner = cancel, q.ev.User.ID
		slots := b.slots
		b.mu.Unlock()

		b.runInSlot(ctx, slots, t, q)
		cancel(nil)
		b.kickSettle()
	}
}

// runInSlot processes q once the thread holds a turn slot. Work stopped
// or shut down while it waited for its slot did not start: a person's
// stop is told in the thread (and the event is done); a shutdown leaves
// the event in the inbox, for the next start.
func (b *Bot) runInSlot(ctx context.Context, slots *turnSlots, t *thread, q queued) {
	if err := slots.acquire(ctx); err != nil {
		var stop approvals.StoppedBy
		if errors.As(context.Cause(ctx), &stop) {
			b.finishEvent(ctx, q.inboxID)
			b.reply(b.lifeCtx(ctx), q.ev, fmt.Sprintf("Stopped by @%s before it started; nothing ran.", stop.Name))
		}
		return
	}
	b.setSlot(t, true)
	defer func() { b.setSlot(t, false); slots.release() }()
	// Its turn begins now: a crash from here on is the turn's to
	// recover (interrupted, never re-run), not the inbox's.
	b.finishEvent(ctx, q.inboxID)
	b.process(withRequester(ctx, q.ev), t.id, q)
}

func (b *Bot) setSlot(t *thread, held bool) {
	b.mu.Lock()
	t.slot = held
	b.mu.Unlock()
}

// Close stops every running turn and waits for the workers: for the
// grace, answers show their last words; then every request to a platform
// and every wait ends. Safe to call twice.
func (b *Bot) Close() {
	b.mu.Lock()
	b.initLocked()
	b.closed = true
	for _, t := range b.threads {
		if t.cancel != nil {
			t.cancel(errShutdown)
		}
	}
	endLife := b.endLife
	b.mu.Unlock()
	b.inbox.close()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	grace := b.ShutdownGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		b.log().Warn("shutdown: cutting the answers still being shown", "grace", grace)
	}
	endLife()
	<-done
}

func (b *Bot) goAsync(fn func()) { b.goAsyncOK(fn) }

// goAsyncOK runs fn on a goroutine the bot waits for, unless the bot is
// shutting down; it reports whether fn runs.
func (b *Bot) goAsyncOK(fn func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Go(fn)
	return true
}

func (b *Bot) log() *slog.Logger {
	if b.Log == nil {
		return slog.Default()
	}
	return b.Log
}
