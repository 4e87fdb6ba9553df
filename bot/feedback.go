package bot

import (
	"context"
	"strconv"
	"strings"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// FeedbackStore keeps the clicks of the answers' feedback buttons, one
// say per person per answer. *store.Store implements it.
type FeedbackStore interface {
	// RecordFeedback keeps f in place of the clicker's earlier say on
	// its turn, and reports whether it said something new.
	RecordFeedback(ctx context.Context, f store.Feedback) (changed bool, err error)
}

var _ FeedbackStore = (*store.Store)(nil)

// feedback records a click of an answer's feedback buttons (Value
// "good:<turn>" or "bad:<turn>", turn the stored turn's id: answerTurn)
// and thanks the clicker alone: a click is never shown to others as a
// vote. A person's repeated click is one say, counted once.
func (c clicks) feedback(ctx context.Context, ev connectors.Event) {
	value, turn, ok := strings.Cut(ev.Value, ":")
	if !ok || (value != "good" && value != "bad") {
		return
	}
	if c.recordFeedback(ctx, store.Feedback{Platform: ev.Platform, TurnID: turn, UserID: ev.User.ID, Value: value}) {
		c.metrics.feedbackClick(ev.Platform, value)
	}
	if ev.Respond != nil {
		ev.Respond(ctx, "Thanks for the feedback.")
	}
}

// recordFeedback keeps f and reports whether it changed the clicker's
// say (without a store, every click does).
func (c clicks) recordFeedback(ctx context.Context, f store.Feedback) bool {
	if c.feedbacks == nil {
		return true
	}
	changed, err := c.feedbacks.RecordFeedback(ctx, f)
	if err != nil && c.log != nil {
		c.log.Warn("feedback not recorded", "platform", f.Platform, "err", err)
	}
	return changed
}

// answerTurn is what an answer's feedback buttons name: the id of the
// stored turn that produced it, which a click is kept with. A turn that
// could not be stored (0) gets no buttons.
func answerTurn(turn int64) string {
	if turn == 0 {
		return ""
	}
	return strconv.FormatInt(turn, 10)
}
