package streamretry

import (
	"net/http"
	"strconv"
	"time"
)

// ServerWait reads the wait a server asked for in h, if it did: its
// retry-after-ms, else its retry-after (seconds or an HTTP date). A nil
// header asks for none.
func ServerWait(h http.Header) (time.Duration, bool) {
	return retryAfter(h, time.Now())
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
