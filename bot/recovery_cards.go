package bot

import (
	"context"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// cardCut is what a card a crash left pending or in progress shows once
// recovery closes it: the killed process alone knew how its task went.
const (
	cardCutDetails = "interrupted by a restart"
	cardCutOutput  = "opsbot restarted while this ran; whether it finished is not known — check before running it again"
)

// cardCutEnder is a cutEnder that also closes the task cards a crash
// left open in the stream it ends (slack.Connector); a connector without
// cards (Discord) is not one, and its answers end as before.
type cardCutEnder interface {
	EndCutCards(ctx context.Context, ref connectors.Ref, stored, note string, open []connectors.Task) error
}

// cardCutEnderOf is the cardCutEnder behind c's redactor, asking the
// fence first.
func cardCutEnderOf(c connectors.Connector) (cardCutEnder, bool) {
	rc, wrapped := c.(*redactedConn)
	if !wrapped {
		e, ok := c.(cardCutEnder)
		return e, ok
	}
	e, ok := rc.Connector.(cardCutEnder)
	if !ok {
		return nil, false
	}
	return fencedCardEnder{cut: e, fence: rc.fence}, true
}

// fencedCardEnder is a cardCutEnder behind the fence. The cards on
// record were redacted before they were shown.
type fencedCardEnder struct {
	cut   cardCutEnder
	fence *postFence
}

// EndCutCards ends a cut answer and its open cards, unless the fence is
// closed.
func (f fencedCardEnder) EndCutCards(ctx context.Context, ref connectors.Ref, stored, note string, open []connectors.Task) error {
	if err := f.fence.err(); err != nil {
		return err
	}
	return f.cut.EndCutCards(ctx, ref, stored, note, open)
}

// cutCards are the final states of the cards a crash left open: each an
// error, saying its end is not known.
func cutCards(cards []store.OpenCard) []connectors.Task {
	out := make([]connectors.Task, 0, len(cards))
	for _, c := range cards {
		if c.ID == "" || c.Title == "" {
			continue // Slack refuses a card without either, and the stop with it
		}
		out = append(out, connectors.Task{ID: c.ID, Title: c.Title, Status: connectors.TaskError, Details: cardCutDetails, Output: cardCutOutput})
	}
	return out
}

// answerCutEnder is a cardCutEnder that also gives the last message of a
// cut answer its feedback buttons (slack.Connector).
type answerCutEnder interface {
	EndCutAnswer(ctx context.Context, ref connectors.Ref, stored, note string, open []connectors.Task, turn string) error
}

// answerCutEnderOf is the answerCutEnder behind c's redactor, asking the
// fence first.
func answerCutEnderOf(c connectors.Connector) (answerCutEnder, bool) {
	rc, wrapped := c.(*redactedConn)
	if !wrapped {
		e, ok := c.(answerCutEnder)
		return e, ok
	}
	e, ok := rc.Connector.(answerCutEnder)
	if !ok {
		return nil, false
	}
	return fencedAnswerEnder{cut: e, fence: rc.fence}, true
}

// fencedAnswerEnder is an answerCutEnder behind the fence.
type fencedAnswerEnder struct {
	cut   answerCutEnder
	fence *postFence
}

// EndCutAnswer ends the last message of a cut answer, with its feedback
// buttons, unless the fence is closed.
func (f fencedAnswerEnder) EndCutAnswer(ctx context.Context, ref connectors.Ref, stored, note string, open []connectors.Task, turn string) error {
	if err := f.fence.err(); err != nil {
		return err
	}
	return f.cut.EndCutAnswer(ctx, ref, stored, note, open, turn)
}
