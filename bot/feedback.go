package bot

import (
	"context"
	"strings"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// FeedbackStore keeps the clicks of the answers' feedback buttons.
// *store.Store implements it.
type FeedbackStore interface {
	RecordFeedback(ctx context.Context, f store.Feedback) error
}

// feedback records a click of an answer's feedback buttons (Value
// "good:<turn>" or "bad:<turn>") and thanks the clicker alone: a
// click is never shown to others as a vote.
func (c clicks) feedback(ctx context.Context, ev connectors.Event) {
	value, turn, ok := strings.Cut(ev.Value, ":")
	if !ok || (value != "good" && value != "bad") {
		return
	}
	c.metrics.feedbackClick(ev.Platform, value)
	if c.feedbacks != nil {
		f := store.Feedback{Platform: ev.Platform, TurnID: turn, UserID: ev.User.ID, Value: value}
		if err := c.feedbacks.RecordFeedback(ctx, f); err != nil && c.log != nil {
			c.log.Warn("feedback not recorded", "platform", ev.Platform, "err", err)
		}
	}
	if ev.Respond != nil {
		ev.Respond(ctx, "Thanks for the feedback.")
	}
}
