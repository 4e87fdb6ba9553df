package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/opsbot/opsbot/agent"
)

// The retry policy. The SDK's own retries are switched off
// (option.WithMaxRetries(0)) and this loop owns them all, for three
// reasons: the SDK cannot see an overloaded_error that arrives as an SSE
// event after a 200 response; its wait is a bare time.After that tests
// cannot replace; and one loop gives one bound on the calls made.
//
// A call is made again when it failed with 408, 429, 500, 502, 503, 504 or
// 529, with an overloaded_error, rate_limit_error or api_error event, or
// with a broken connection — and only if no event of its response was
// yielded yet. Once text is on someone's screen a second call would repeat
// or contradict it, so a later failure is an EventError and the text shown
// stays valid. At most maxAttempts calls are made (default 4). The wait is
// the server's retry-after-ms or retry-after (seconds or an HTTP date) when
// it sent one, else 1s, 2s, 4s, … up to 16s; a server asking for more than
// maxRetryWait is not waited for, the error goes to the caller at once.

// maxRetryWait is the longest server-requested wait honoured in a turn.
const maxRetryWait = time.Minute

// withRetries runs call until it succeeds, the caller stops listening, or
// the failure may not or need not be retried, which is then yielded.
func (p *Provider) withRetries(ctx context.Context, out *emitter, model string, call func() error) {
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil || out.stopped {
			return
		}
		wait, retry := p.retryWait(ctx, out.shown, err, attempt)
		if !retry {
			out.emit(errorEvent(p.describe(ctx, err, model, attempt, out.shown)))
			return
		}
		if p.onRetry != nil {
			p.onRetry(wait, p.describe(ctx, err, model, attempt, false))
		}
		if err := p.sleep(ctx, wait); err != nil {
			out.emit(errorEvent(fmt.Errorf("anthropic: cancelled while waiting to retry: %w", err)))
			return
		}
	}
}

// retryWait says whether a call that failed with err is made again, and
// after how long.
func (p *Provider) retryWait(ctx context.Context, shown bool, err error, attempt int) (time.Duration, bool) {
	if shown || ctx.Err() != nil || attempt >= p.maxAttempts || !retryable(err) {
		return 0, false
	}
	wait, ok := serverWait(err)
	if !ok {
		wait = backoff(attempt)
	}
	return wait, wait <= maxRetryWait
}

// retryable reports whether err is an overload, a rate limit, a server
// fault or a broken connection.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		switch string(apiErr.Type()) {
		case "overloaded_error", "rate_limit_error", "api_error":
			return true
		}
		switch apiErr.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errEndedEarly)
}

// serverWait reads the wait the server asked for, if it did.
func serverWait(err error) (time.Duration, bool) {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		return 0, false
	}
	return retryAfter(apiErr.Response.Header, time.Now())
}

// retryAfter parses retry-after-ms, then retry-after (seconds or an HTTP
// date relative to now).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// backoff is the wait before call attempt+1 when the server named none.
func backoff(attempt int) time.Duration {
	return min(time.Second<<(attempt-1), 16*time.Second)
}

// sleepContext waits d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
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
