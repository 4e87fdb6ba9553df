package web

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time      { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) add(d time.Duration) { f.mu.Lock(); f.t = f.t.Add(d); f.mu.Unlock() }

// A client posting faster than post_rate past its burst is answered 429
// with Retry-After; another client is not held up, and the first may post
// again once the wait has passed.
func TestPostRateLimit(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{PostRate: 0.5, PostBurst: 3}, nil)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c.limits = newPostLimits(c.cfg.PostRate, c.cfg.PostBurst, clock.now)
	h := c.Handler()
	from := func(addr string) func(*http.Request) { return func(r *http.Request) { r.RemoteAddr = addr } }
	post := func(user, addr string) (int, string) {
		w := call(t, h, "POST", "/api/messages", `{"channel":"ops","user":"`+user+`","text":"flood"}`, from(addr))
		return w.Code, w.Header().Get("Retry-After")
	}
	for i := range 3 {
		if code, _ := post("mallory", "127.0.0.1:1000"); code != http.StatusCreated {
			t.Fatalf("post %d within the burst: %d", i+1, code)
		}
	}
	// A new name each time is the same client.
	if code, after := post("mallory2", "127.0.0.1:1001"); code != http.StatusTooManyRequests || after != "2" {
		t.Errorf("past the burst: %d Retry-After %q, want 429 with Retry-After 2", code, after)
	}
	if code, _ := post("alice", "[::1]:2000"); code != http.StatusCreated {
		t.Errorf("another client: %d, want 201", code)
	}
	clock.add(2 * time.Second)
	if code, _ := post("mallory", "127.0.0.1:1000"); code != http.StatusCreated {
		t.Errorf("after Retry-After: %d, want 201", code)
	}
}
