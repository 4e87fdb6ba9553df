package anthropic

import (
	"errors"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// The retry policy; the loop and the waits are streamretry's. A call is
// made again when it failed with 408, 429, 500, 502, 503, 504 or 529, with
// an overloaded_error, rate_limit_error or api_error event (which the SDK
// cannot see when it arrives as an SSE event after a 200 response), or
// with a broken connection — and only if no event of its response was
// yielded yet. At most 4 calls are made unless WithMaxAttempts says
// otherwise. The wait is the server's retry-after-ms or retry-after
// (seconds or an HTTP date) when it sent one, else 1s, 2s, 4s, … up to
// 16s; a server asking for more than streamretry.MaxWait is not waited
// for, the error goes to the caller at once.

// retryable reports whether err is an overload, a rate limit, a server
// fault or a broken connection.
func retryable(err error) bool {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return streamretry.Broken(err)
	}
	switch string(apiErr.Type()) {
	case "overloaded_error", "rate_limit_error", "api_error":
		return true
	}
	return streamretry.RetryableStatus(apiErr.StatusCode)
}

// responseHeader is the header of the response that failed with err, for
// the wait the server asked for; nil when there was none.
func responseHeader(err error) http.Header {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		return nil
	}
	return apiErr.Response.Header
}
