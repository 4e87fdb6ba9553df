package bot

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// interruptedNote ends an answer a crash cut short.
const interruptedNote = "\n\n_(interrupted: opsbot restarted before this answer finished)_"

// Start delivers job notifications and expires overdue approvals until ctx
// ends. Call Recover first, before any event can arrive.
func (b *Bot) Start(ctx context.Context) {
	b.goAsync(func() { b.loop(ctx, time.Second, b.deliver) })
	if b.Gate != nil {
		b.goAsync(func() {
			b.loop(ctx, 15*time.Second, b.expireAndFollowUp)
		})
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
func (b *Bot) Recover(ctx context.Context) {
	b.endOrphans(ctx)
	msgs, err := b.Store.StreamingMessages(ctx)
	if err != nil {
		b.log().Error("find interrupted answers", "err", err)
	}
	for _, m := range msgs {
		c, _, ok := b.conn(m.Platform)
		if !ok {
			continue // its platform is not configured now; keep it for later
		}
		ref := connectors.Ref{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread, ID: m.MessageID}
		if err := editRetrying(ctx, c, ref, connectors.Message{Text: m.Text + interruptedNote}); err != nil {
			b.log().Warn("finalize interrupted answer", "message", m.MessageID, "err", err)
		}
		if f, ok := c.(finisher); ok {
			f.Finish(ctx, ref)
		}
		b.Store.FinishStreaming(ctx, m.ID)
	}
	turns, err := b.Store.RunningTurns(ctx)
	if err != nil {
		b.log().Error("find interrupted turns", "err", err)
	}
	for _, t := range turns {
		b.Store.EndTurn(ctx, t.ID, store.TurnInterrupted)
	}
	jobs, err := b.Store.InterruptRunningJobs(ctx)
	if err != nil {
		b.log().Error("interrupt jobs", "err", err)
	}
	for _, j := range jobs {
		b.log().Warn("job interrupted by restart", "job", j.ID, "host", j.Host)
	}
}

// deliver posts job notifications into the threads that started the jobs.
func (b *Bot) deliver(ctx context.Context) {
	notes, err := b.Store.UndeliveredNotifications(ctx, 50)
	if err != nil {
		b.log().Warn("notifications", "err", err)
		return
	}
	for _, n := range notes {
		if n.SessionID == 0 {
			b.Store.MarkDelivered(ctx, n.ID)
			continue
		}
		sess, err := b.Store.Session(ctx, n.SessionID)
		if err != nil {
			continue
		}
		c, _, ok := b.conn(sess.Platform)
		if !ok {
			b.Store.MarkDelivered(ctx, n.ID) // e.g. a terminal session: nobody to post to
			continue
		}
		if _, err := postComplete(ctx, c, sess.Channel, sess.Thread, connectors.Message{Text: "🔔 " + n.Text}); err != nil {
			b.log().Warn("post notification", "id", n.ID, "err", err)
			continue
		}
		b.Store.MarkDelivered(ctx, n.ID)
	}
}
