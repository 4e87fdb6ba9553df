package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// ActionStop is the Stop button's action id; its value is the thread.
const ActionStop = "stop"

// renderer starts a stream into the event's thread; done waits for it.
func (b *Bot) renderer(ev connectors.Event, withStop bool) (*Renderer, func()) {
	c, budget, _ := b.conn(ev.Platform)
	var buttons []connectors.Button
	if withStop {
		buttons = []connectors.Button{{ActionID: ActionStop, Value: threadOf(ev).String(), Label: "Stop", Style: connectors.StyleDanger}}
	}
	r := NewRenderer(c, budget, b.Store, b.log(), ev.Channel, ev.Thread, buttons...)
	return r, func() { r.Close(context.Background(), nil) }
}

// emitter turns agent events into what the thread shows.
func (b *Bot) emitter(ctx context.Context, ev connectors.Event, r *Renderer) func(agent.Event) {
	return func(e agent.Event) {
		switch e.Kind {
		case agent.TextDelta:
			r.Write(e.Text)
		case agent.ToolStarted:
			r.Status(e.Summary, false)
		case agent.ToolFinished:
			mark := "✓"
			if e.IsError {
				mark = "✗"
			}
			r.Status(fmt.Sprintf("%s %s: %s", mark, e.Tool, e.Summary), true)
			b.refreshCards(ctx, ev)
		case agent.Notice:
			r.Status(e.Text, false)
		case agent.ApprovalPending:
			if !e.Approval.Reattached {
				b.postCard(context.WithoutCancel(ctx), ev, e.Approval.ID)
			}
		}
	}
}

// turn runs the agent on the event's text and streams the answer.
func (b *Bot) turn(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	if b.Agent == nil {
		b.reply(ctx, ev, b.NoAgentHelp)
		return
	}
	r, _ := b.renderer(ev, true)
	end := b.recordTurn(ctx, sess)
	err := b.Agent.Turn(ctx, sess, ev.Text, b.emitter(ctx, ev, r))
	end(err)
	b.finishTurn(ctx, ev, r, err)
}

// recordTurn notes a running turn in the store; the returned func records
// how it ended. A turn still "running" at start-up was cut by a crash.
func (b *Bot) recordTurn(ctx context.Context, sess agent.SessionInfo) func(error) {
	t, err := b.Store.BeginTurn(ctx, sess.ID)
	if err != nil {
		b.log().Warn("record turn", "err", err)
		return func(error) {}
	}
	return func(err error) {
		status := store.TurnDone
		switch {
		case errors.Is(err, context.Canceled):
			status = store.TurnCancelled
		case err != nil:
			status = store.TurnFailed
		}
		b.Store.EndTurn(context.WithoutCancel(ctx), t.ID, status)
	}
}

// resume continues a turn after a restart, once its approval is decided.
func (b *Bot) resume(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	if b.Agent == nil {
		return
	}
	r, _ := b.renderer(ev, true)
	end := b.recordTurn(ctx, sess)
	_, err := b.Agent.Resume(ctx, sess, b.emitter(ctx, ev, r))
	end(err)
	b.finishTurn(ctx, ev, r, err)
}

func (b *Bot) finishTurn(ctx context.Context, ev connectors.Event, r *Renderer, err error) {
	b.refreshCards(context.WithoutCancel(ctx), ev)
	switch {
	case errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), agent.ErrShutdown):
		err = errors.New("interrupted: opsbot is restarting; a pending approval still counts, and the turn resumes when it is decided")
	case errors.Is(err, context.Canceled):
		err = errors.New("stopped; this answer is not kept in the conversation")
	case err != nil:
		b.log().Warn("turn ended with an error", "thread", threadOf(ev), "err", err)
	}
	r.Close(context.WithoutCancel(ctx), err)
}
