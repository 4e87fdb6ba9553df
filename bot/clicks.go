package bot

import (
	"context"
	"log/slog"

	"github.com/opsbot/opsbot/connectors"
)

// clicks acts on button clicks: Stop on the thread's running work, a vote
// on the request's card, Ask again through the follow-ups.
type clicks struct {
	threads *threads
	may     approvers
	// vote records a vote; grant an "Approve similar" (grants.go);
	// askAgain asks for a request's command again.
	vote, grant, askAgain func(ctx context.Context, ev connectors.Event)
	// plans takes the plans' buttons; nil when plans are off.
	plans *Plans
	out   replier
	// feedbacks keeps feedback clicks (feedback.go); may be nil.
	feedbacks FeedbackStore
	metrics   *Metrics
	log       *slog.Logger
}

// click routes one button click.
func (c clicks) click(ctx context.Context, ev connectors.Event) {
	if c.plans != nil && c.plans.owns(ctx, ev) {
		c.plans.click(ctx, ev)
		return
	}
	switch ev.ActionID {
	case ActionStop:
		id, ok := parseThreadID(ev.Value)
		if ok {
			if why := stopRefusal(c.threads, c.may, id, ev); why != "" {
				respond(ctx, c.out, ev, why)
				return
			}
		}
		if !ok || !c.threads.stop(id, stopperOf(ev)) {
			respond(ctx, c.out, ev, "Nothing is running in this thread any more.")
			return
		}
		if ev.Respond != nil {
			ev.Respond(ctx, "Stopped.")
		}
	case ActionApprove, ActionDeny:
		c.vote(ctx, ev)
	case ActionApproveSimilar:
		c.grant(ctx, ev)
	case ActionAskAgain:
		c.askAgain(ctx, ev)
	case connectors.ActionFeedback:
		c.feedback(ctx, ev)
	default:
		respond(ctx, c.out, ev, "That button does nothing any more.")
	}
}
