package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrStopped ends a turn a person stopped. The error a stopped turn
// returns also matches context.Canceled.
var ErrStopped = errors.New("agent: the turn was stopped")

// stopStep is the note of the call a stopped turn makes.
const stopStep = "[opsbot note, not the person's words] The person stopped this turn and no more tools can run. " +
	"Answer now, briefly: summarize what you found so far, quoting the evidence, and what is left to check."

// stopWordsTime bounds the call that answers after a Stop: the person
// wants the turn over, so it is shorter than the time limit's.
const stopWordsTime = 20 * time.Second

type stopKey struct{}

// Stoppable returns a context for a turn whose Stop is gentle, and the
// func that stops it. The first stop cancels ctx with its cause: the turn
// records what its tools did and makes one short last call, with no
// tools, for a summary of what it found. A second stop ends that call at
// once (opsbot then says what ran). A cause that is ErrShutdown cancels
// both at once: a turn stopped for a restart keeps its pending calls, to
// be resumed after it.
func Stoppable(parent context.Context) (ctx context.Context, stop context.CancelCauseFunc) {
	hard, hardStop := context.WithCancelCause(parent)
	soft, softStop := context.WithCancelCause(context.WithValue(hard, stopKey{}, hard))
	var mu sync.Mutex
	return soft, func(cause error) {
		mu.Lock()
		defer mu.Unlock()
		if soft.Err() == nil && !errors.Is(cause, ErrShutdown) {
			softStop(cause)
			return
		}
		hardStop(cause)
	}
}

// afterStop is the context of a stopped turn's last call, from ctx's
// Stoppable: ok is false when ctx has none (a subagent's turn, or a
// caller that only cancels).
func afterStop(ctx context.Context) (hard context.Context, ok bool) {
	hard, ok = ctx.Value(stopKey{}).(context.Context)
	return hard, ok && hard != nil
}

// ownStop keeps a turn's Stoppable to itself: a subagent's turn, run by
// one of its tools, ends at once when stopped, and its parent answers.
func ownStop(ctx context.Context) context.Context {
	return context.WithValue(ctx, stopKey{}, context.Context(nil))
}

// stopped ends a turn a person stopped: the calls it had under way are on
// record (dispatch wrote how each ended), those left say they did not
// run, and, when the turn is Stoppable, one short last call asks the
// model for what it found. The history is kept.
func (a *Agent) stopped(parent context.Context, t *turn) error {
	keep := context.WithoutCancel(parent)
	a.settle(keep, t, "not run: the person stopped the turn")
	err := fmt.Errorf("%w (%w)", ErrStopped, parent.Err())
	hard, ok := afterStop(parent)
	if !ok {
		return a.fail(t.emit, err)
	}
	ctx, cancel := context.WithTimeout(keep, stopWordsTime)
	defer cancel()
	defer context.AfterFunc(hard, cancel)()
	a.finalWords(ctx, t, stopStep)
	return a.fail(t.emit, err)
}
