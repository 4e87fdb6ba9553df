package streamretry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Unreported is a failure no server reported, worded for the person who
// reads it in the thread: its text names no address and no Go error, the
// cause stays reachable with errors.Is / errors.As for logs.
type Unreported struct {
	msg string
	err error
}

// Error returns the worded failure.
func (e *Unreported) Error() string { return e.msg }

// Unwrap returns the cause.
func (e *Unreported) Unwrap() error { return e.err }

// DescribeUnreported words a failure no server reported (a broken
// connection, a stream that ended early, a refused dial) for the caller,
// prefixed with the provider's name: after text was shown it says the text
// so far is kept; before, how many calls were made and why they failed.
func DescribeUnreported(name string, err error, attempts int, shown bool) error {
	var msg string
	var stalled *Stalled
	switch {
	case shown && errors.As(err, &stalled):
		msg = fmt.Sprintf("the model stopped sending for %s; the text so far is kept. Ask again to continue", seconds(stalled.After))
	case errors.As(err, &stalled):
		msg = fmt.Sprintf("the model API sent nothing for %s (tried %d times); it may be overloaded. Ask again in a few minutes",
			seconds(stalled.After), attempts)
	case shown && errors.Is(err, ErrEndedEarly):
		msg = "the model API closed the stream before the answer was complete; the text so far is kept. Ask again to continue"
	case shown:
		msg = "the connection to the model API broke mid-answer; the text so far is kept. Ask again to continue"
	default:
		msg = fmt.Sprintf("could not get a response from the model API (tried %d times): %s. Check that agent.base_url is reachable, then ask again",
			attempts, reason(err))
	}
	return &Unreported{msg: name + ": " + msg, err: err}
}

// reason words why a connection failed, without addresses.
func reason(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "it did not answer in time"
	case errors.Is(err, ErrEndedEarly):
		return "the stream ended before the answer was complete"
	case errors.As(err, new(*net.DNSError)):
		return "its host name could not be resolved"
	}
	return "the connection broke"
}

// Attempts words how many calls were made, for the label of an error:
// nothing for one, ", 3 attempts" for three.
func Attempts(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(", %d attempts", n)
}
