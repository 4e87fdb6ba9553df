package bot

import (
	"context"
	"errors"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
)

// The inbound path is a line of stages, as alertmanager's notify stages
// are (notify/notify.go: Stage, StageFunc, MultiStage, PipelineBuilder):
//
//	record → dedupe              Handle, within the platform's ack wait
//	admit → route → queue        the inbox's one router, in record order
//	session → turn → render      the thread's worker, once it holds a slot
//	finish                       the thread's worker, whatever came before
//
// Each stage is a small type over the parts it needs (stages.go), testable
// alone; none calls back into Bot. A stage that has dealt with the work
// ends its line with errDone, where alertmanager's returns no alerts.

// stage is one step of the inbound path.
type stage interface {
	Exec(ctx context.Context, w *work) error
}

// stageFunc is a stage from a function.
type stageFunc func(ctx context.Context, w *work) error

// Exec calls f.
func (f stageFunc) Exec(ctx context.Context, w *work) error { return f(ctx, w) }

// multiStage runs its stages in turn until one ends the line.
type multiStage []stage

// errDone ends a line of stages without error: the work is dealt with.
var errDone = errors.New("bot: the work needs no further stage")

// Exec runs each stage in turn; errDone ends the line, as nil.
func (ms multiStage) Exec(ctx context.Context, w *work) error {
	for _, s := range ms {
		if err := s.Exec(ctx, w); err != nil {
			if errors.Is(err, errDone) {
				return nil
			}
			return err
		}
	}
	return nil
}

var (
	_ stage = multiStage(nil)
	_ stage = stageFunc(nil)
)

// work is one event as it passes the stages, and what each found.
type work struct {
	ev connectors.Event
	// ctx is the context the router acts in: the request's values,
	// without its cancel (the record stage runs within the ack wait).
	ctx context.Context
	// inboxID is the event's inbox row (record); 0 for work on no row.
	inboxID int64
	// first: the event was not on record yet (record), else a retry.
	first bool
	// jobEnd marks the turn a job's end asked for: no person's message,
	// so neither bot.access nor thread_replies apply to it.
	jobEnd bool
	// followUp is the decided approval whose follow-up this work is.
	followUp string
	// notice is the queued notice a previous process posted for it, nil
	// when none (replay).
	notice *connectors.Ref
	// handed: a later step finishes the inbox row (route, queue).
	handed bool
	// sess is the thread's session (session).
	sess agent.SessionInfo
	// answer is the agent's answer the turn stage streamed, for the render
	// stage to end; nil when the turn answered otherwise.
	answer *answer
}
