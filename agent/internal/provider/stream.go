package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// Calls are what Stream needs of a provider for one response: the SDK's
// request built from the neutral one (an error ends the stream at once)
// with the model it names, one call of it in ctx that emits into out and
// calls alive on each event it receives, and the wording of a failure.
type Calls[P any] struct {
	Params   func() (params P, model string, err error)
	Once     func(ctx context.Context, params P, out *streamretry.Emitter, alive func()) error
	Describe func(ctx context.Context, err error, model string, attempts int, shown bool) error
}

// Stream is a provider's Stream: text deltas as they come, each tool call
// once complete, then the usage and the stop reason, or an EventError.
// Each range over the sequence makes a new call; breaking out of it ends
// the call. opts.Retries says when a failed call is made again; a call
// that receives nothing for opts.IdleTimeout — headers or events — is
// stalled (streamretry.Idle).
func Stream[P any](ctx context.Context, opts *Options, c Calls[P]) iter.Seq[agent.StreamEvent] {
	return func(yield func(agent.StreamEvent) bool) {
		params, model, err := c.Params()
		if err != nil {
			yield(agent.StreamEvent{Kind: agent.EventError, Err: err})
			return
		}
		out := streamretry.NewEmitter(yield)
		once := func() error {
			call, alive, done := streamretry.Idle(ctx, opts.IdleTimeout, opts.Timers)
			return done(c.Once(call, params, out, alive))
		}
		opts.Retries.Run(ctx, out, once,
			func(err error, attempts int, shown bool) error { return c.Describe(ctx, err, model, attempts, shown) })
	}
}

// ObjectJSON checks that raw is a JSON object; empty input becomes {}.
func ObjectJSON(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(trimmed) || trimmed[0] != '{' {
		return nil, fmt.Errorf("not a JSON object: %.80q", trimmed)
	}
	return json.RawMessage(trimmed), nil
}
