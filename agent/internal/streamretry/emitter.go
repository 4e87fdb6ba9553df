package streamretry

import "github.com/opsbot/opsbot/agent"

// Emitter passes events to the caller and remembers whether any was
// passed (after which no retry may happen) and whether the caller stopped.
// It is used by one response at a time and is not safe for concurrent use.
type Emitter struct {
	yield   func(agent.StreamEvent) bool
	shown   bool
	stopped bool
}

// NewEmitter returns an Emitter passing events to yield, the function an
// iter.Seq of events is ranged with.
func NewEmitter(yield func(agent.StreamEvent) bool) *Emitter {
	return &Emitter{yield: yield}
}

// Emit passes ev on; it returns false once the caller stopped listening.
func (e *Emitter) Emit(ev agent.StreamEvent) bool {
	if e.stopped {
		return false
	}
	e.shown = true
	if !e.yield(ev) {
		e.stopped = true
	}
	return !e.stopped
}

// Shown reports whether any event was passed to the caller.
func (e *Emitter) Shown() bool { return e.shown }

// Stopped reports whether the caller stopped listening.
func (e *Emitter) Stopped() bool { return e.stopped }
