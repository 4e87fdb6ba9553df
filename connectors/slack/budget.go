package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/opsbot/opsbot/connectors"
)

// Slack limits Web API calls per workspace and per method, in tiers
// (https://docs.slack.dev/apis/web-api/rate-limits): a budget per method
// keeps every call within its tier, shared by everything the connector
// does in the workspace, so that Slack never has to answer 429. chat.
// postMessage is limited per channel (about one a second).
var tiers = map[string]float64{ // calls a minute
	"chat.update":                           50,  // Tier 3
	"chat.appendStream":                     100, // Tier 4
	"chat.startStream":                      20,  // Tier 2
	"chat.stopStream":                       20,  // Tier 2
	"chat.postEphemeral":                    100, // Tier 4
	"users.info":                            100, // Tier 4
	"conversations.replies":                 50,  // Tier 3 (internal apps; recovery reads a cut answer back)
	"usergroups.users.list":                 20,  // Tier 2
	"assistant.threads.setStatus":           50,  // Tier 3
	"assistant.threads.setSuggestedPrompts": 100, // Tier 4
	"assistant.threads.setTitle":            100, // Tier 4
	"reactions.add":                         50,  // Tier 3
	"reactions.remove":                      20,  // Tier 2
	"auth.test":                             100,
	"chat.postMessage":                      60, // per channel: ~1/s
}

// burst is how many calls of a method may go at once: a few, so that the
// calls of a minute are spread over it rather than spent at its start.
const burst = 3

// bursts are the methods whose calls may go many at once: the signs that
// a question is taken (signs.go), shown to 20 people asking together
// within a second or two. Their rate is lowered so that the burst and a
// minute's calls stay within 90% of the tier.
var bursts = map[string]int{"reactions.add": 20, "assistant.threads.setStatus": 15}

// budgets holds one limiter per (workspace, method[, channel]) and the
// back-off a 429 asked for.
type budgets struct {
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	until    map[string]time.Time // no call of the key before then (a 429)
	strikes  map[string]int       // 429s without Retry-After in a row
}

func newBudgets() *budgets {
	return &budgets{limiters: map[string]*rate.Limiter{}, until: map[string]time.Time{}, strikes: map[string]int{}}
}

// key names a budget; chat.postMessage's is per channel.
func budgetKey(team, method, channel string) string {
	if method == "chat.postMessage" {
		return team + "/" + method + "/" + channel
	}
	return team + "/" + method
}

// allow reports whether a call of method may be made at once, and
// counts it when so.
func (b *budgets) allow(team, method, channel string) bool {
	k := budgetKey(team, method, channel)
	l := b.limiter(k, method)
	b.mu.Lock()
	until := b.until[k]
	b.mu.Unlock()
	return time.Now().After(until) && l.Allow()
}

// limiter is the budget of key k, made on first use.
func (b *budgets) limiter(k, method string) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.limiters[k]
	if l == nil {
		perMin := tiers[method]
		if perMin == 0 {
			perMin = 20
		}
		// 90% of the tier: the burst and a sliding minute never exceed it.
		l = rate.NewLimiter(rate.Limit(perMin*0.9/60), burst)
		if b := bursts[method]; b > 0 {
			l = rate.NewLimiter(rate.Limit((perMin*0.9-float64(b))/60), b)
		}
		b.limiters[k] = l
	}
	return l
}

// wait blocks until a call of method may be made now.
func (b *budgets) wait(ctx context.Context, team, method, channel string) error {
	k := budgetKey(team, method, channel)
	l := b.limiter(k, method)
	b.mu.Lock()
	until := b.until[k]
	b.mu.Unlock()
	if d := time.Until(until); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	return l.Wait(ctx)
}

// limited converts Slack's 429 (with Retry-After: slack.RateLimitedError;
// without: a StatusCodeError) into a connectors.RateLimitError, and holds
// back every call of the method until it has passed. Other errors and nil
// pass as they are.
func (b *budgets) limited(team, method, channel string, err error) error {
	k := budgetKey(team, method, channel)
	var wait time.Duration
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	switch {
	case errors.As(err, &rl):
		wait = rl.RetryAfter
		b.mu.Lock()
		b.strikes[k] = 0
		b.mu.Unlock()
	case errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests:
		// No Retry-After: back off, longer each time in a row.
		b.mu.Lock()
		b.strikes[k]++
		wait = min(time.Second<<min(b.strikes[k]-1, 5), 30*time.Second)
		b.mu.Unlock()
	default:
		if err == nil {
			b.mu.Lock()
			delete(b.strikes, k)
			b.mu.Unlock()
		}
		return err
	}
	b.mu.Lock()
	if t := time.Now().Add(wait); t.After(b.until[k]) {
		b.until[k] = t
	}
	b.mu.Unlock()
	return fmt.Errorf("slack: %s: %w", method, &connectors.RateLimitError{RetryAfter: wait})
}
