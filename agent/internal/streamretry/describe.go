package streamretry

import (
	"errors"
	"fmt"
)

// DescribeUnreported words a failure no server reported (a broken
// connection, a stream that ended early, a refused dial) for the caller,
// prefixed with the provider's name: after text was shown it says the text
// so far is kept; before, how many calls were made.
func DescribeUnreported(name string, err error, attempts int, shown bool) error {
	if shown {
		if errors.Is(err, ErrEndedEarly) {
			return fmt.Errorf("%s: the server closed the stream before the response was complete (the text so far is kept): %w", name, err)
		}
		return fmt.Errorf("%s: the connection broke mid-response (the text so far is kept): %w", name, err)
	}
	return fmt.Errorf("%s: could not get a response from the API (tried %d times): %w", name, attempts, err)
}

// Attempts words how many calls were made, for the label of an error:
// nothing for one, ", 3 attempts" for three.
func Attempts(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(", %d attempts", n)
}
