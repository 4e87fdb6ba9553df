package discord

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// count429 is how many calls the fake answered 429.
func count429(f *discordtest.Fake) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Status == 429 {
			n++
		}
	}
	return n
}

// Once Discord's headers have described a route's bucket, the connector
// waits for the window instead of spending calls on 429s: 12 posts at
// once into a channel whose budget is 3 a second all land, none refused.
func TestRouteLimitsFromHeaders(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.SetRoutes(map[string]discordtest.Limit{"POST /channels/:id/messages": {N: 3, Per: time.Second}})
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	d := connectors.Dest{Platform: Platform, Channel: ch}
	if _, err := c.Post(t.Context(), d, connectors.Message{Text: "first"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Go(func() {
			_, err := c.Post(t.Context(), d, connectors.Message{Text: fmt.Sprint("post ", i)})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("post: %v", err)
		}
	}
	if n := count429(f); n != 0 {
		t.Errorf("%d answers 429 after the bucket was known; want 0", n)
	}
}

// The global limit of 50 calls a second holds across routes and
// channels: 120 channel lookups at once draw no 429.
func TestGlobalLimit(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var chans []string
	for i := range 120 {
		chans = append(chans, f.AddChannel(guild, fmt.Sprint("c", i)))
	}
	c, _ := started(t, f, Config{})
	var wg sync.WaitGroup
	for _, ch := range chans {
		wg.Go(func() {
			if _, err := c.channel(t.Context(), ch); err != nil {
				t.Errorf("lookup: %v", err)
			}
		})
	}
	wg.Wait()
	if n := count429(f); n != 0 {
		t.Errorf("%d answers 429 (global limit); want 0", n)
	}
}

// A route asked to wait longer than the connector waits is answered
// connectors.RateLimitError at once, without a call to Discord, until
// its window resets.
func TestSpentBucketAnswersWithoutACall(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	c, _ := started(t, f, Config{})
	d := connectors.Dest{Platform: Platform, Channel: ch}
	f.RateLimitNext(30 * time.Second)
	if _, err := c.Post(t.Context(), d, connectors.Message{Text: "a"}); err == nil {
		t.Fatal("the 429 was not returned")
	}
	calls := len(f.Calls())
	_, err := c.Post(t.Context(), d, connectors.Message{Text: "b"})
	if wait, ok := connectors.RetryAfter(err); !ok || wait < 25*time.Second {
		t.Errorf("post into the spent bucket: %v; want a RateLimitError near 30s", err)
	}
	if len(f.Calls()) != calls {
		t.Error("the connector called Discord while the bucket was spent")
	}
}
