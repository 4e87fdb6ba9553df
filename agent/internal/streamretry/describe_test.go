package streamretry

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
)

func TestDescribeUnreported(t *testing.T) {
	t.Parallel()
	broken := fmt.Errorf("read: %w", io.ErrUnexpectedEOF)
	tests := []struct {
		name     string
		err      error
		attempts int
		shown    bool
		want     string
	}{
		{"ended early after text", ErrEndedEarly, 1, true, "p: the model API closed the stream before the answer was complete; the text so far is kept. Ask again to continue"},
		{"broken after text", broken, 1, true, "p: the connection to the model API broke mid-answer; the text so far is kept. Ask again to continue"},
		{"nothing shown", broken, 4, false, "p: could not get a response from the model API (tried 4 times): the connection broke. Check that agent.base_url is reachable, then ask again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := DescribeUnreported("p", tt.err, tt.attempts, tt.shown)
			if got.Error() != tt.want || !errors.Is(got, tt.err) {
				t.Errorf("got %q (wraps: %v); want %q wrapping the error", got, errors.Is(got, tt.err), tt.want)
			}
		})
	}
}

func TestAttempts(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "", 2: ", 2 attempts", 4: ", 4 attempts"} {
		if got := Attempts(n); got != want {
			t.Errorf("Attempts(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestBroken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), true},
		{ErrEndedEarly, true},
		{errors.New("bad request"), false},
	}
	for _, tt := range tests {
		if got := Broken(tt.err); got != tt.want {
			t.Errorf("Broken(%v) = %v; want %v", tt.err, got, tt.want)
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	t.Parallel()
	retry := map[int]bool{408: true, 429: true, 500: true, 502: true, 503: true, 504: true, 529: true}
	for _, s := range []int{200, 400, 401, 403, 404, 408, 413, 422, 429, 500, 501, 502, 503, 504, 529} {
		if got := RetryableStatus(s); got != retry[s] {
			t.Errorf("RetryableStatus(%d) = %v; want %v", s, got, retry[s])
		}
	}
}
