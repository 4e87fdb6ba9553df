package openai

import (
	"net/http"

	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// The retry policy; the loop and the waits are streamretry's. A call is
// made again when it failed with 408, 429 (but not insufficient_quota,
// which waiting does not fix), 500, 502, 503, 504 or 529, with an
// in-stream error whose type or code says overloaded, rate limit or server
// error (which the SDK cannot see when it arrives as a data: chunk after a
// 200 response), or with a broken connection — and only if no event of its
// response was yielded yet. At most 4 calls are made unless
// WithMaxAttempts says otherwise. The wait is the server's retry-after-ms
// or retry-after (seconds or an HTTP date) when it sent one, else 1s, 2s,
// 4s, … up to 16s; a server asking for more than streamretry.MaxWait is
// not waited for, the error goes to the caller at once.

// retryable reports whether err is an overload, a rate limit, a server
// fault or a broken connection.
func retryable(err error) bool {
	se, ok := asServerError(err)
	if !ok {
		return streamretry.Broken(err)
	}
	if se.code == "insufficient_quota" || se.typ == "insufficient_quota" {
		return false
	}
	if overloaded(se) || se.is("rate_limit") || se.is("server_error") {
		return true
	}
	return streamretry.RetryableStatus(se.status)
}

// responseHeader is the header of the response that failed with err, for
// the wait the server asked for; nil when there was none.
func responseHeader(err error) http.Header {
	se, ok := asServerError(err)
	if !ok {
		return nil
	}
	return se.header
}
