package bot

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// Start delivers job notifications and expires overdue approvals until ctx
// ends, and logs when what is on record is acted on (settled.go). Call
// Recover first, before any event can arrive.
func (b *Bot) Start(ctx context.Context) {
	b.inbox.release()
	b.crew.do(func() { b.recovery.retry(ctx) })
	b.crew.do(func() { b.settle.watch(ctx) })
	b.crew.do(func() { loop(ctx, time.Second, b.notices.deliver) })
	if b.expires {
		b.crew.do(func() {
			loop(ctx, 15*time.Second, func(ctx context.Context) {
				b.followUps.expire(ctx)
				b.settle.sweptNow()
			})
		})
	} else {
		b.settle.sweptNow()
	}
	b.crew.do(func() { loop(ctx, time.Hour, func(ctx context.Context) { b.inbox.forget(ctx, b.eventsKept) }) })
}

// Recover ends the commands a crash left running (saying so in their
// threads), finalizes answers it left mid-stream, and marks the turns and
// jobs it left running as interrupted (jobs are reported, never re-run).
// Then it queues the events a previous process recorded and did not act
// on; Start routes them, before any new one.
func (b *Bot) Recover(ctx context.Context) {
	b.settle.measure(ctx)
	if b.orphans != nil {
		b.orphans.end(ctx)
	}
	b.recovery.run(ctx)
	b.plans.recoverCut(ctx) // plans a crash cut (planclicks.go)
	b.inbox.replay(ctx, func(platform string) bool { _, ok := b.platforms.conn(platform); return ok })
}

// ShowApproval posts the card of approval request id at d, as a turn does
// when its command waits; the votes cast on it come back through Handle
// like any click. A front that opens requests outside a turn (`opsbot
// hosts exec`) shows them so, through the one card and vote path. A card
// that cannot be posted denies its request: nobody can approve what they
// cannot see.
func (b *Bot) ShowApproval(ctx context.Context, d connectors.Dest, id string) {
	b.cards.post(ctx, connectors.Event{Platform: d.Platform, Workspace: d.Workspace, Channel: d.Channel, Thread: d.Thread, User: d.Recipient}, id)
}

// eventsKept is how long a platform event id is remembered for dropping
// retries: platforms retry within minutes (Slack three times, Discord
// within its 15-minute token), so days are ample.
const eventsKept = 3 * 24 * time.Hour

// loop runs fn now and then every interval, until ctx ends.
func loop(ctx context.Context, every time.Duration, fn func(context.Context)) {
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

// jobEndTurn is the event of a short agent turn in the thread of a job
// that ended (agent.on_job_end: turn): the model reads the job's outcome
// and output and says what it means, without waiting for someone to
// speak.
func jobEndTurn(sess store.Session, job hosts.Job) connectors.Event {
	return connectors.Event{Kind: connectors.EventMessage, Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel,
		Thread: sess.Thread, User: connectors.User{ID: job.Requester, Name: job.Requester}, Text: tools.JobEndPrompt(job), Mention: true}
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
