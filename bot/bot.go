package bot

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// Bot routes chat events: each thread is a session; its messages run one at
// a time (later ones queue); deterministic commands answer without the
// model; everything else is an agent turn streamed into the thread.
//
// An event passes named stages (pipeline.go, stages.go): record → dedupe
// as it arrives (Handle), admit → route → queue on the inbox's one
// router, and session → turn → render → finish on its thread's worker.
// Its parts are built once, by New, each over small interfaces of its own.
type Bot struct {
	platforms *Platforms
	crew      *crew
	inbox     *inbox
	threads   *threads
	cards     *cards
	followUps *followUps
	notices   *jobNotices
	recovery  *recovery
	// orphans is nil when no Sweeper is configured.
	orphans *orphans
	settle  *settleWatch
	// plans is nil when plans are off (Deps.Plans).
	plans *Plans
	// expires: the gate expires requests (none without a gate).
	expires bool
	// eventsKept and grace: see Deps.
	eventsKept, grace time.Duration
	log               *slog.Logger
}

// Deps is what the bot is built over: its stores by aggregate, the parts
// of the process it acts through, and its settings. *store.Store is every
// one of its stores.
type Deps struct {
	Approvals ApprovalStore
	Sessions  SessionStore
	Inbox     InboxStore
	// JobRecords is the record of background jobs and running commands.
	JobRecords JobStore
	// Feedback keeps the clicks of the answers' feedback buttons; nil
	// keeps none.
	Feedback FeedbackStore
	// Memory is the incident memory `summarize` and `postmortem` read;
	// nil turns them off.
	Memory *store.Memory

	// Platforms is the connector set the bot posts through (NewPlatforms).
	Platforms *Platforms
	// Agent answers free text; nil when no model is configured.
	Agent *agent.Agent
	// Guard is the one path from a chat command to a host.
	Guard *approvals.Guard
	// Jobs runs background jobs; nil when they are off.
	Jobs *hosts.Jobs
	// Gate counts votes and expires requests; nil when nobody can approve.
	Gate *approvals.Gate
	// Grants keeps the scoped grants of "Approve similar" (the Guard's
	// approvals.Grants reads them); nil: cards do not offer it.
	Grants approvals.GrantStore
	// Plans proposes and runs plans (NewPlans); nil: plans are off.
	Plans *Plans
	// Hosts lists the inventory for `hosts`.
	Hosts []agent.HostInfo
	// Health runs and lists the scheduled health checks for `health`; nil
	// when none are configured.
	Health Health
	// Sweeper, when set, ends at start-up what a crashed process left
	// running (see ProcessLedger).
	Sweeper Sweeper
	Config  Config
	Log     *slog.Logger
	// Metrics counts events, turns and the gaps between an answer's
	// visible updates (nil: nothing is counted).
	Metrics *Metrics
	// NoAgentHelp says how to turn the agent on.
	NoAgentHelp string
	// CancelOnNewMessage makes a new message in a thread stop the running
	// turn instead of queueing behind it.
	CancelOnNewMessage bool
	// JobEndTurns runs a short agent turn in a job's thread when the job
	// ends (agent.on_job_end: turn), rather than only posting the news.
	JobEndTurns bool
	// EventsKept is how long event ids are kept to drop platform retries
	// (default 3 days).
	EventsKept time.Duration
	// ShutdownGrace is how long Close lets answers show their last words
	// before it cuts every platform request and wait (default 10s).
	ShutdownGrace time.Duration
}

// errNoStore is New's error for Deps without their stores.
var errNoStore = errors.New("bot: Deps needs its Approvals, Sessions, Inbox and JobRecords stores")

// New builds the bot and each of its parts, once.
func New(d Deps) (*Bot, error) {
	if d.Approvals == nil || d.Sessions == nil || d.Inbox == nil || d.JobRecords == nil {
		return nil, errNoStore
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Platforms == nil {
		d.Platforms = NewPlatforms(nil, d.Log)
	}
	p := build(d)
	b := &Bot{platforms: d.Platforms, crew: p.crew, inbox: p.inbox, threads: p.threads, cards: p.cards, followUps: p.followUps,
		notices: p.notices, recovery: p.recovery, orphans: p.orphans, settle: p.settle, expires: d.Gate != nil,
		eventsKept: d.EventsKept, grace: d.ShutdownGrace, log: d.Log}
	if b.plans = d.Plans; b.plans != nil {
		b.plans.handle = b.Handle
	}
	if b.eventsKept <= 0 {
		b.eventsKept = eventsKept
	}
	if b.grace <= 0 {
		b.grace = 10 * time.Second
	}
	return b, nil
}

// Handle receives one event, as connectors.Handler: it records the event
// durably (a fast insert) and returns nil, doing no platform I/O; the
// work is done by goroutines the bot owns, in the order the events came.
// An event it could not record within recordWait it returns an error for
// (connectors.ErrNotRecorded), and does not act on.
func (b *Bot) Handle(ctx context.Context, ev connectors.Event) error {
	return b.inbox.take(ctx, ev)
}

// Queues reports the depth of the bot's queues now.
func (b *Bot) Queues() Queues { return b.threads.queues() }

// Full says why a new message to a thread would be turned away now, or
// "": its thread's queue holds bot.max_queue messages, or bot.max_waiting
// threads already wait for a turn. A connector that can refuse a message
// before it takes it (the web API's 429) asks first; on the others the
// bot answers in the thread.
func (b *Bot) Full(platform, channel, thread string) string {
	return b.threads.full(threadID{platform, channel, thread})
}

// Close stops every running turn and waits for the workers: for the
// grace, answers show their last words; then every request to a platform
// and every wait ends. Safe to call twice.
func (b *Bot) Close() {
	b.threads.close()
	b.crew.stop()
	b.inbox.close()
	done := make(chan struct{})
	go func() { b.crew.wait(); close(done) }()
	t := time.NewTimer(b.grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		b.log.Warn("shutdown: cutting the answers still being shown", "grace", b.grace)
	}
	b.platforms.end()
	<-done
}
