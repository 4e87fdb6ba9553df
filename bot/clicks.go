package bot

import (
	"context"

	"github.com/opsbot/opsbot/approvals"
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
		b.followUpQueue().askAgain(ctx, ev)
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
	c := &cards{store: b.Store, out: b, decided: func(ctx context.Context, a approvals.Approval) { b.followUpQueue().now(ctx, a) }, log: b.log()}
	if b.Gate != nil {
		c.gate = b.Gate
	}
	return c
}

// followUps acts on decided approvals through b: its cards, its runner,
// its agent and its queue.
func (b *Bot) followUps() *followUps {
	fu := b.followUpQueue()
	fu.run = b.runner()
	if b.Guard != nil {
		fu.policy = b.Guard.Policy
	}
	if b.Agent != nil {
		fu.resume, fu.settle = b.answers().resume, b.Agent.Settle
	}
	return fu
}

// followUpQueue is the part of b's follow-ups that finds decided
// approvals and queues them in their threads (the expiry loop, a vote, Ask
// again): it reads no more of b than that needs, so that it may run beside
// a worker.
func (b *Bot) followUpQueue() *followUps {
	fu := &followUps{store: b.Store, out: b, cards: b.cards(), enqueue: b.enqueue, log: b.log()}
	if b.Gate != nil {
		fu.expirer = b.Gate
	}
	return fu
}

// expireAndFollowUp expires overdue requests and queues what nobody waits
// for (Start runs it every 15 seconds).
func (b *Bot) expireAndFollowUp(ctx context.Context) { b.followUpQueue().expire(ctx) }
