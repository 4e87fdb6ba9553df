package streamretry

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name     string
		header   map[string]string
		wantWait time.Duration
		wantOK   bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{"zero seconds", map[string]string{"Retry-After": "0"}, 0, true},
		{"HTTP date", map[string]string{"Retry-After": date(30 * time.Second)}, 30 * time.Second, true},
		{"HTTP date in the past", map[string]string{"Retry-After": date(-time.Minute)}, 0, true},
		{"retry-after-ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "7"}, 250 * time.Millisecond, true},
		{"retry-after-ms alone", map[string]string{"Retry-After-Ms": "1200.5"}, 1200500 * time.Microsecond, true},
		{"garbage retry-after-ms falls back", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "3"}, 3 * time.Second, true},
		{"negative retry-after-ms falls back", map[string]string{"Retry-After-Ms": "-5", "Retry-After": "3"}, 3 * time.Second, true},
		{"garbage", map[string]string{"Retry-After": "in a while"}, 0, false},
		{"negative seconds", map[string]string{"Retry-After": "-3"}, 0, false},
		{"garbage both", map[string]string{"Retry-After-Ms": "x", "Retry-After": "y"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			wait, ok := retryAfter(h, now)
			if wait != tt.wantWait || ok != tt.wantOK {
				t.Errorf("retryAfter = %v, %v; want %v, %v", wait, ok, tt.wantWait, tt.wantOK)
			}
		})
	}
}

func TestServerWaitNilHeader(t *testing.T) {
	t.Parallel()
	if wait, ok := ServerWait(nil); ok || wait != 0 {
		t.Errorf("ServerWait(nil) = %v, %v; want 0, false", wait, ok)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 16 * time.Second, 6: 16 * time.Second, 12: 16 * time.Second}
	for attempt, w := range want {
		if got := backoff(attempt); got != w {
			t.Errorf("backoff(%d) = %v; want %v", attempt, got, w)
		}
	}
}
