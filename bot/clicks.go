package bot

import (
	"context"

	"github.com/opsbot/opsbot/connectors"
)

// action routes a button click: Stop to the thread's running work, a vote
// to the request's card, Ask again to the follow-ups.
func (b *Bot) action(ctx context.Context, ev connectors.Event) {
	switch ev.ActionID {
	case ActionStop:
		id, ok := parseThreadID(ev.Value)
		if ok {
			if why := b.stopRefusal(id, ev); why != "" {
				respond(ctx, b, ev, why)
				return
			}
		}
		if !ok || !b.stopTurn(id, stopperOf(ev)) {
			respond(ctx, b, ev, "Nothing is running in this thread any more.")
			return
		}
		if ev.Respond != nil {
			ev.Respond(ctx, "Stopped.")
		}
	case ActionApprove, ActionDeny:
		b.cards().vote(ctx, ev)
	case ActionAskAgain:
		b.askAgain(ctx, ev)
	default:
		respond(ctx, b, ev, "That button does nothing any more.")
	}
}

// replier answers in an event's thread.
type replier interface {
	reply(ctx context.Context, ev connectors.Event, text string)
}

var _ replier = (*Bot)(nil)

// respond answers the clicker alone where the platform can, else in the
// thread.
func respond(ctx context.Context, out replier, ev connectors.Event, text string) {
	if ev.Respond != nil {
		if err := ev.Respond(ctx, text); err == nil {
			return
		}
	}
	out.reply(ctx, ev, text)
}

// cards posts and edits approval cards through b, and counts votes
// through b's gate; a vote that decides a request queues its follow-up.
func (b *Bot) cards() *cards {
	c := &cards{store: b.Store, out: b, decided: b.followUpNow, log: b.log()}
	if b.Gate != nil {
		c.gate = b.Gate
	}
	return c
}
