package web

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimiters bounds the clients whose post rate is remembered: past it,
// those idle long enough to have a full bucket again are forgotten.
const maxLimiters = 10000

// postLimits is a token bucket per client (identity.rateKey).
type postLimits struct {
	rate  rate.Limit
	burst int
	now   func() time.Time

	mu sync.Mutex
	by map[string]*clientLimit
}

type clientLimit struct {
	lim  *rate.Limiter
	last time.Time
}

func newPostLimits(perSecond float64, burst int, now func() time.Time) *postLimits {
	return &postLimits{rate: rate.Limit(perSecond), burst: burst, now: now, by: map[string]*clientLimit{}}
}

// allow takes one post from key's bucket; when it is empty it says how
// long until the next post may be made.
func (p *postLimits) allow(key string) (ok bool, retryAfter time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	cl := p.by[key]
	if cl == nil {
		if len(p.by) >= maxLimiters {
			p.forgetIdle(now)
		}
		cl = &clientLimit{lim: rate.NewLimiter(p.rate, p.burst)}
		p.by[key] = cl
	}
	cl.last = now
	r := cl.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 || !r.OK() {
		r.CancelAt(now)
		return false, max(d, time.Second)
	}
	return true, 0
}

// forgetIdle drops the clients whose bucket has refilled: forgetting them
// changes nothing.
func (p *postLimits) forgetIdle(now time.Time) {
	full := time.Duration(math.Ceil(float64(p.burst)/float64(p.rate))) * time.Second
	for k, cl := range p.by {
		if now.Sub(cl.last) > full {
			delete(p.by, k)
		}
	}
}

// retryAfterSeconds is a Retry-After value: whole seconds, rounded up.
func retryAfterSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}
