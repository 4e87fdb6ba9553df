package streamretry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/opsbot/opsbot/agent"
)

// The providers switch their SDK's own retries off (option.WithMaxRetries(0))
// and this loop owns them all, for three reasons: an SDK cannot see an error
// that arrives inside the stream after a 200 response; its wait is a bare
// timer that tests cannot replace; and one loop gives one bound on the calls
// made.
//
// A call is made again only if no event of its response was yielded yet.
// Once text is on someone's screen a second call would repeat or contradict
// it, so a later failure is an EventError and the text shown stays valid.

// MaxWait is the longest server-requested wait honoured in a turn; a
// server asking for more is not waited for, the error goes to the caller
// at once.
const MaxWait = time.Minute

// Policy is one provider's retry policy: which of its failures are worth
// another call, where the server's wait is, and how long to go on.
type Policy struct {
	// Name prefixes the errors the loop words itself, e.g. "anthropic".
	Name string
	// MaxAttempts bounds the calls made for one response.
	MaxAttempts int
	// Retryable reports whether a call that failed with err is worth
	// making again: an overload, a rate limit, a server fault or a broken
	// connection. It is not asked about a cancelled or expired context.
	Retryable func(err error) bool
	// Header returns the response header that came with err, nil if none.
	Header func(err error) http.Header
	// Sleep waits d between calls; it must return ctx.Err() when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, if set, is called before each retry with the wait and the
	// worded error that caused it.
	OnRetry func(wait time.Duration, err error)
}

// Run calls call until it succeeds, the caller stops listening, or the
// failure may not or need not be retried, which is then worded by describe
// and emitted as an EventError. describe is given the number of calls made
// and whether any event was shown.
func (p *Policy) Run(ctx context.Context, out *Emitter, call func() error, describe func(err error, attempts int, shown bool) error) {
	stalls := 0
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil || out.Stopped() {
			return
		}
		if errors.As(err, new(*Stalled)) {
			stalls++
		}
		wait, retry := p.wait(ctx, out.Shown(), err, attempt, stalls)
		if !retry {
			out.Emit(errorEvent(describe(err, attempt, out.Shown())))
			return
		}
		worded := describe(err, attempt, false)
		if p.OnRetry != nil {
			p.OnRetry(wait, worded)
		}
		if notice := agent.RetryNotice(ctx); notice != nil {
			notice(wait, retryReason(worded))
		}
		if err := p.Sleep(ctx, wait); err != nil {
			out.Emit(errorEvent(fmt.Errorf("%s: cancelled while waiting to retry: %w", p.Name, err)))
			return
		}
	}
}

// wait says whether a call that failed with err is made again, and after
// how long. A stalled call is made again once: a second stall is worded,
// rather than holding the turn for another minute.
func (p *Policy) wait(ctx context.Context, shown bool, err error, attempt, stalls int) (time.Duration, bool) {
	if shown || ctx.Err() != nil || attempt >= p.MaxAttempts || ended(err) {
		return 0, false
	}
	if errors.As(err, new(*Stalled)) {
		return backoff(attempt), stalls == 1
	}
	if !p.Retryable(err) {
		return 0, false
	}
	wait, ok := ServerWait(p.Header(err))
	if !ok {
		wait = backoff(attempt)
	}
	return wait, wait <= MaxWait
}

// backoff is the wait before call attempt+1 when the server named none.
func backoff(attempt int) time.Duration {
	return min(time.Second<<(attempt-1), 16*time.Second)
}

// Sleep waits d or until ctx ends, returning ctx.Err() then: the wait
// between retries unless a provider is given another.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errorEvent wraps err as the event that ends a response.
func errorEvent(err error) agent.StreamEvent {
	return agent.StreamEvent{Kind: agent.EventError, Err: err}
}

// retryReason words why a call is made again, for the status line of the
// turn that waits.
func retryReason(err error) string {
	var status interface{ HTTPStatus() int }
	if errors.As(err, &status) {
		switch s := status.HTTPStatus(); {
		case s == http.StatusTooManyRequests:
			return "rate limited by the model API"
		case s == 529 || s == http.StatusServiceUnavailable:
			return "the model API is overloaded"
		case s >= 500:
			return "the model API had a server error"
		}
	}
	return "the connection to the model API failed"
}
