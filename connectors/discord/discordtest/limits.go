package discordtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"time"
)

// Limit is a route's budget: N calls per Per, for each channel (Discord's
// major parameter).
type Limit struct {
	N   int
	Per time.Duration
}

// DefaultRoutes are the budgets the fake enforces, near what Discord
// announces for a bot: 5 messages and 5 edits per 5 seconds per channel.
var DefaultRoutes = map[string]Limit{
	"POST /channels/:id/messages":             {5, 5 * time.Second},
	"PATCH /channels/:id/messages/:id":        {5, 5 * time.Second},
	"POST /channels/:id/messages/:id/threads": {10, 10 * time.Second},
	"GET /channels/:id":                       {10, time.Second},
}

// GlobalLimit is Discord's global budget: 50 calls a second.
const GlobalLimit = 50

type limits struct {
	routes  map[string]Limit
	windows map[string]*window
	recent  []time.Time // the calls of the last second, for the global limit
	force   time.Duration
}

type window struct {
	reset time.Time
	count int
}

func newLimits() *limits {
	return &limits{routes: DefaultRoutes, windows: map[string]*window{}}
}

// SetRoutes replaces the route budgets (for a benchmark).
func (f *Fake) SetRoutes(routes map[string]Limit) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limits.routes = routes
}

// RateLimitNext makes the next REST call (but interactions) a 429 asking
// to wait d.
func (f *Fake) RateLimitNext(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limits.force = d
}

// take spends a call of route on major, setting the X-RateLimit-* headers
// on h; limited says the call is refused, retry for how long.
func (l *limits) take(h http.Header, route, major string, now time.Time) (retry time.Duration, global, limited bool) {
	lim, ok := l.routes[route]
	if !ok {
		lim = Limit{50, time.Second}
	}
	sum := sha256.Sum256([]byte(route))
	h.Set("X-RateLimit-Bucket", hex.EncodeToString(sum[:8]))
	h.Set("X-RateLimit-Limit", fmt.Sprint(lim.N))
	if l.force > 0 {
		retry, l.force = l.force, 0
		setWindow(h, 0, now.Add(retry), now)
		h.Set("X-RateLimit-Scope", "user")
		return retry, false, true
	}
	kept := l.recent[:0]
	for _, t := range l.recent {
		if now.Sub(t) < time.Second {
			kept = append(kept, t)
		}
	}
	l.recent = kept
	if len(l.recent) >= GlobalLimit {
		retry = l.recent[0].Add(time.Second).Sub(now)
		h.Del("X-RateLimit-Bucket")
		h.Del("X-RateLimit-Limit")
		h.Set("X-RateLimit-Global", "true")
		h.Set("X-RateLimit-Scope", "global")
		return retry, true, true
	}
	key := route + " " + major
	w := l.windows[key]
	if w == nil || !now.Before(w.reset) {
		w = &window{reset: now.Add(lim.Per)}
		l.windows[key] = w
	}
	if w.count >= lim.N {
		setWindow(h, 0, w.reset, now)
		h.Set("X-RateLimit-Scope", "user")
		return w.reset.Sub(now), false, true
	}
	w.count++
	l.recent = append(l.recent, now)
	setWindow(h, lim.N-w.count, w.reset, now)
	return 0, false, false
}

func setWindow(h http.Header, remaining int, reset, now time.Time) {
	h.Set("X-RateLimit-Remaining", fmt.Sprint(remaining))
	h.Set("X-RateLimit-Reset", fmt.Sprintf("%.3f", float64(reset.UnixMilli())/1000))
	// Rounded up to the millisecond, as a client waiting that long must
	// find the window reset.
	h.Set("X-RateLimit-Reset-After", fmt.Sprintf("%.3f", math.Ceil(float64(reset.Sub(now))/float64(time.Millisecond))/1000))
}
