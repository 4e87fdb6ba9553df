package streamretry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
)

// ErrEndedEarly is a stream that closed cleanly before the response was
// complete (before message_stop, or before a finish_reason).
var ErrEndedEarly = errors.New("the response ended before it was complete")

// ended reports whether err is a cancelled or expired context, which no
// retry can help.
func ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Broken reports whether err is a broken connection or a stream that ended
// early: the retryable failures a server did not report itself.
func Broken(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrEndedEarly)
}

// RetryableStatus reports whether an HTTP status says the server may
// answer later: 408, 429, 500, 502, 503, 504, or 529 (overloaded).
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}
