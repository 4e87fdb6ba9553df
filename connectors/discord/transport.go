package discord

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// discordgo computes its endpoints from https://discord.com/ at init;
// overriding its Endpoint* variables would redirect nothing already
// computed and would race between sessions. The connector's transport
// sends each call to the configured base instead.
const discordHost = "discord.com"

// globalRate paces every REST call but interactions, one at a time, well
// under Discord's global limit of 50 requests a second; the global window
// (globalwindow.go) keeps the limit as Discord counts it, on arrival.
const (
	globalRate  = 40
	globalBurst = 1
)

// maxWait is the longest a call waits for its route's bucket (within its
// context) before the connector answers connectors.RateLimitError
// instead, for the caller to wait out as it sees fit.
const maxWait = 10 * time.Second

// routeLimiter is the http.RoundTripper under discordgo. It rewrites
// discord.com to the configured API base, keeps the global limit, and
// waits out each route's bucket as Discord's X-RateLimit-* headers
// announce it (never a hard-coded figure). discordgo's own limiter sleeps
// without a context (a shutdown would wait it out) and knows nothing of
// X-RateLimit-Bucket, which groups routes: this one reads the headers and
// takes them off the answer, so discordgo's never has anything to wait for.
type routeLimiter struct {
	next   http.RoundTripper
	base   *url.URL // nil: discord.com itself
	global *rate.Limiter
	window *globalWindow

	mu          sync.Mutex
	hashes      map[string]string // route key → X-RateLimit-Bucket
	buckets     map[string]*bucket
	globalUntil time.Time // a global 429 stops everything until then
}

// bucket is what the headers said of one bucket's window.
type bucket struct {
	limit     int
	remaining int
	reset     time.Time
	window    string // X-RateLimit-Reset, the same for every answer of one window
}

// errWait is a call refused before it was sent: its bucket is empty for
// longer than maxWait.
type errWait struct{ retryAfter time.Duration }

func (e *errWait) Error() string {
	return "Discord's rate limit for this route is spent; retry after " + e.retryAfter.String()
}

func newRouteLimiter(apiURL string, next http.RoundTripper) (*routeLimiter, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	l := &routeLimiter{next: next, global: rate.NewLimiter(globalRate, globalBurst),
		window: newGlobalWindow(globalMax, time.Second),
		hashes: map[string]string{}, buckets: map[string]*bucket{}}
	if apiURL != "" && apiURL != DefaultAPIURL {
		u, err := url.Parse(apiURL)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		l.base = u
	}
	return l, nil
}

// RoundTrip waits for the call's budget, sends it and reads the budget
// left from the answer.
func (l *routeLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	key := routeKey(req.Method, req.URL.Path)
	global, err := l.waitGlobal(req.Context(), key)
	if err != nil {
		return nil, err
	}
	if err := l.take(req.Context(), key); err != nil {
		return nil, err
	}
	if global {
		if err := l.window.acquire(req.Context()); err != nil {
			return nil, err
		}
	}
	resp, err := l.next.RoundTrip(l.rewrite(req))
	if global {
		l.window.done()
	}
	if err == nil {
		l.learn(key, resp)
		for k := range resp.Header {
			if strings.HasPrefix(k, "X-Ratelimit-") {
				delete(resp.Header, k)
			}
		}
	}
	return resp, err
}

// rewrite points a discord.com call at the configured base.
func (l *routeLimiter) rewrite(req *http.Request) *http.Request {
	if l.base == nil || req.URL.Host != discordHost {
		return req
	}
	r := req.Clone(req.Context())
	u := *l.base
	u.Path = l.base.Path + strings.TrimPrefix(req.URL.Path, "/")
	u.RawPath = ""
	u.RawQuery = req.URL.RawQuery
	r.URL = &u
	r.Host = u.Host
	return r
}

// waitGlobal waits for the global budget and says whether the call is
// within it; interactions are outside it
// (Discord: "Interaction endpoints are not bound to the bot's Global Rate
// Limit"), which keeps an acknowledgement within its 3 seconds.
func (l *routeLimiter) waitGlobal(ctx context.Context, key string) (global bool, err error) {
	if strings.Contains(key, " /interactions/") || strings.Contains(key, " /webhooks/") {
		return false, nil
	}
	l.mu.Lock()
	until := time.Until(l.globalUntil)
	l.mu.Unlock()
	if until > maxWait {
		return true, &errWait{until}
	}
	if until > 0 && !sleep(ctx, until) {
		return true, context.Cause(ctx)
	}
	return true, l.global.Wait(ctx)
}

// take spends one call of key's bucket, waiting for its window to reset
// when it is spent.
func (l *routeLimiter) take(ctx context.Context, key string) error {
	for {
		l.mu.Lock()
		b := l.bucketLocked(key)
		now := time.Now()
		if b == nil || b.remaining > 0 || !now.Before(b.reset) {
			if b != nil {
				if !now.Before(b.reset) && b.limit > 0 {
					b.remaining = b.limit // a new window
				}
				b.remaining--
			}
			l.mu.Unlock()
			return nil
		}
		wait := b.reset.Sub(now)
		l.mu.Unlock()
		if wait > maxWait {
			return &errWait{wait}
		}
		if !sleep(ctx, wait) {
			return context.Cause(ctx)
		}
	}
}

// bucketLocked is key's bucket, nil while no answer has said anything of
// it.
func (l *routeLimiter) bucketLocked(key string) *bucket {
	if h, ok := l.hashes[key]; ok {
		return l.buckets[h+" "+majorOf(key)]
	}
	return l.buckets[key]
}

// learn reads the X-RateLimit-* headers of an answer.
func (l *routeLimiter) learn(key string, resp *http.Response) {
	h := resp.Header
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if resp.StatusCode == http.StatusTooManyRequests && (h.Get("X-RateLimit-Global") == "true" || h.Get("X-RateLimit-Scope") == "global") {
		if d, ok := seconds(h.Get("Retry-After")); ok {
			l.globalUntil = now.Add(d)
		}
		return
	}
	bkey := key
	if hash := h.Get("X-RateLimit-Bucket"); hash != "" {
		l.hashes[key] = hash
		bkey = hash + " " + majorOf(key)
	}
	b := l.buckets[bkey]
	if b == nil {
		b = &bucket{}
		l.buckets[bkey] = b
	}
	limit, errL := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	remaining, errR := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	after, okA := seconds(h.Get("X-RateLimit-Reset-After"))
	if resp.StatusCode == http.StatusTooManyRequests {
		if d, ok := seconds(h.Get("Retry-After")); ok && (!okA || d > after) {
			after, okA = d, true
		}
		remaining, errR = 0, nil
	}
	if errL == nil {
		b.limit = limit
	}
	if errR != nil || !okA {
		return
	}
	window := h.Get("X-RateLimit-Reset")
	if window == "" || window != b.window || resp.StatusCode == http.StatusTooManyRequests {
		b.window, b.remaining, b.reset = window, remaining, now.Add(after)
		return
	}
	b.remaining = min(b.remaining, remaining) // answers of one window may come out of order
}

// seconds reads a header's seconds, fractions allowed.
func seconds(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// routeKey names a call's route as Discord groups rate limits: its method
// and path with every id collapsed but the major parameter (the channel,
// guild, webhook or interaction it acts on).
func routeKey(method, path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 0 && segs[0] == "api" {
		segs = segs[1:]
	}
	if len(segs) > 0 && len(segs[0]) > 1 && segs[0][0] == 'v' {
		if _, err := strconv.Atoi(segs[0][1:]); err == nil {
			segs = segs[1:]
		}
	}
	for i, s := range segs {
		major := i == 1 || (i == 2 && (segs[0] == "webhooks" || segs[0] == "interactions"))
		if !major && isID(s) {
			segs[i] = ":id"
		}
	}
	return method + " /" + strings.Join(segs, "/")
}

// majorOf is the major parameter of a route key: its top-level resource
// and id ("/channels/123").
func majorOf(key string) string {
	_, path, _ := strings.Cut(key, " ")
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(segs) < 2 {
		return path
	}
	return segs[0] + "/" + segs[1]
}

// isID says whether a path segment is an id: it holds a digit, or is a
// token longer than a word.
func isID(s string) bool {
	return len(s) > 32 || strings.ContainsAny(s, "0123456789")
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryAfterOf is how long err asks to wait when it is a rate limit:
// discordgo's 429 (with retry on rate limit off) or a call this
// transport held back.
func retryAfterOf(err error) (time.Duration, bool) {
	var w *errWait
	if errors.As(err, &w) {
		return w.retryAfter, true
	}
	return discordgoRetryAfter(err)
}
