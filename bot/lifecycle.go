package bot

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// Start delivers job notifications and expires overdue approvals until ctx
// ends, and logs when what is on record is acted on (settled.go). Call
// Recover first, before any event can arrive.
func (b *Bot) Start(ctx context.Context) {
	b.inbox.release(b)
	b.goAsync(func() { b.watchSettled(ctx) })
	b.goAsync(func() { b.loop(ctx, time.Second, b.deliver) })
	if b.Gate != nil {
		b.goAsync(func() {
			b.loop(ctx, 15*time.Second, func(ctx context.Context) {
				b.expireAndFollowUp(ctx)
				b.swept()
			})
		})
	} else {
		b.swept()
	}
	b.goAsync(func() { b.loop(ctx, time.Hour, b.forgetOldEvents) })
}

// eventsKept is how long a platform event id is remembered for dropping
// retries: platforms retry within minutes (Slack three times, Discord
// within its 15-minute token), so days are ample.
const eventsKept = 3 * 24 * time.Hour

// forgetOldEvents prunes the event ids older than EventsKept.
func (b *Bot) forgetOldEvents(ctx context.Context) {
	kept := b.EventsKept
	if kept <= 0 {
		kept = eventsKept
	}
	b.forgetEvents(ctx, kept)
}

func (b *Bot) forgetEvents(ctx context.Context, kept time.Duration) {
	if _, err := b.Store.ForgetEventsBefore(ctx, time.Now().Add(-kept)); err != nil {
		b.log().Warn("forget old event ids", "err", err)
	}
}

func (b *Bot) loop(ctx context.Context, every time.Duration, fn func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		fn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Recover ends the commands a crash left running (saying so in their
// threads), finalizes answers it left mid-stream, and marks the turns and
// jobs it left running as interrupted (jobs are reported, never re-run).
// Then it queues the events a previous process recorded and did not act
// on; Start routes them, before any new one.
func (b *Bot) Recover(ctx context.Context) {
	b.endOrphans(ctx)
	b.recovery().run(ctx)
	b.replayInbox(ctx)
}

// recovery finishes what a crash left of the answers, turns and jobs,
// posting through b.
func (b *Bot) recovery() *recovery {
	return &recovery{store: b.Store, out: b, log: b.log()}
}

// deliver posts job notifications into the threads that started the jobs.
func (b *Bot) deliver(ctx context.Context) { b.jobNotices().deliver(ctx) }

// jobNotices delivers job notifications through b; with
// agent.on_job_end: turn, each wakes the agent in its thread, through the
// inbox like any event.
func (b *Bot) jobNotices() *jobNotices {
	n := &jobNotices{store: b.Store, out: b, log: b.log(), serves: b.platformNames}
	if b.JobEndTurns && b.Agent != nil {
		n.turn, n.queue = jobEndTurn, b.queueJobEnd
	}
	return n
}

// jobEndTurn is the event of a short agent turn in the thread of a job
// that ended (agent.on_job_end: turn): the model reads the job's outcome
// and output and says what it means, without waiting for someone to
// speak.
func jobEndTurn(sess store.Session, job hosts.Job) connectors.Event {
	return connectors.Event{Kind: connectors.EventMessage, Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel,
		Thread: sess.Thread, User: connectors.User{ID: job.Requester, Name: job.Requester}, Text: agent.JobEndPrompt(job), Mention: true}
}

// queueJobEnd hands a job-end turn on record (inbox row id) to the router.
func (b *Bot) queueJobEnd(ev connectors.Event, id int64) {
	b.inbox.push(b, inboxItem{ctx: context.Background(), ev: ev, id: id, jobEnd: true})
}

// finalize gives a message left half-written its last form: a stream the
// platform still keeps is stopped with it, any other message edited.
func finalize(ctx context.Context, c connectors.Connector, ref connectors.Ref, m connectors.Message) error {
	if st, ok := c.(connectors.Streamer); ok && c.Limits().NativeStreaming {
		if err := st.StopStream(ctx, ref, m); err == nil {
			return nil
		}
	}
	return editRetrying(ctx, c, ref, m)
}
