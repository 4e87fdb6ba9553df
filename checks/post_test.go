package checks

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// postEnv runs a schedule over a fake fleet whose outputs the test sets,
// at times the test sets, and publishes each run to a fake poster.
type postEnv struct {
	t      *testing.T
	runner *Runner
	pub    *Publisher
	poster *fakePoster
	sched  Schedule
	checks []Check
	mu     sync.Mutex
	out    map[string]string // host → output
	now    time.Time
}

func newPostEnv(t *testing.T, mode PostMode, destinations ...Destination) *postEnv {
	st := openStore(t)
	e := &postEnv{t: t, poster: &fakePoster{max: 3000}, out: map[string]string{"web-01": "40", "web-02": "40"},
		now: time.Date(2026, 11, 23, 9, 0, 0, 0, berlin)}
	clock := func() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }
	st.SetNow(clock)
	fleet := hosts.RunnerFunc(func(_ context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return hosts.Result{Host: h.Name, Output: []byte(e.out[h.Name])}, nil
	})
	e.runner = &Runner{Hosts: fleet, Resolver: namedHosts("web-01", "web-02"), Policy: allowAll, Store: st, Now: clock}
	e.pub = &Publisher{Store: st, Posters: postersOf(e.poster)}
	if len(destinations) == 0 {
		destinations = []Destination{{"fake", "ops"}}
	}
	e.sched = Schedule{Name: "morning", Cron: "CRON_TZ=Europe/Berlin 0 * * * *", Checks: []string{"disk"}, PostTo: destinations, Post: mode}
	e.checks = []Check{{Name: "disk", Targets: "group:all", Command: "df", Expect: Expect{FailAbove: ptr(90.0)}}}
	return e
}

// runAt runs and publishes at t; it returns what was posted and edited.
func (e *postEnv) runAt(t time.Time, outputs map[string]string) (posts, edits []fakePost, err error) {
	e.mu.Lock()
	e.now = t
	for h, o := range outputs {
		e.out[h] = o
	}
	e.mu.Unlock()
	p0, e0 := e.poster.snapshot()
	rep, err := e.runner.Run(bg, e.sched, e.checks)
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.pub.Publish(bg, e.sched, rep)
	p1, e1 := e.poster.snapshot()
	return p1[len(p0):], e1[len(e0):], err
}

func TestPublishKeepsOneMessagePerDayWithDetailsInItsThread(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostAlways)
	day1 := e.now
	posts, edits, err := e.runAt(day1, nil)
	if err != nil || len(edits) != 0 || len(posts) < 2 || posts[0].Thread != "" {
		t.Fatalf("first run of the day: posts %+v, edits %d, %v; want a new message, then details in its thread", posts, len(edits), err)
	}
	root := posts[0].ID
	for _, p := range posts[1:] {
		if p.Thread != root {
			t.Errorf("details posted in thread %q; want the day's message %s", p.Thread, root)
		}
	}
	posts, edits, _ = e.runAt(day1.Add(time.Hour), map[string]string{"web-02": "95"})
	if len(edits) != 1 || edits[0].ID != root || !strings.Contains(edits[0].Msg.Text, "1 new failure") {
		t.Fatalf("second run of the day: edits %+v; want the day's message edited to the new summary", edits)
	}
	for _, p := range posts {
		if p.Thread != root {
			t.Errorf("second run posted %q outside the day's thread", p.Msg.Text)
		}
	}
	posts, edits, _ = e.runAt(day1.AddDate(0, 0, 1), nil)
	if len(edits) != 0 || len(posts) < 2 || posts[0].Thread != "" || posts[0].ID == root {
		t.Errorf("next day: posts %+v, edits %d; want a new message for the new day", posts, len(edits))
	}
}

func TestPublishChangesPostsOnChangeAndOnceADay(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostChanges)
	day1 := e.now
	steps := []struct {
		at      time.Time
		outputs map[string]string
		posted  bool
		says    string
	}{
		{day1, nil, true, "first run"},
		{day1.Add(time.Hour), nil, false, ""},
		{day1.Add(2 * time.Hour), map[string]string{"web-02": "95"}, true, "1 new failure"},
		{day1.Add(3 * time.Hour), nil, false, ""}, // still failing: no change
		{day1.Add(4 * time.Hour), map[string]string{"web-02": "41"}, true, "1 recovered"},
		{day1.AddDate(0, 0, 1), nil, true, "no change since"}, // the day's "still all ok"
		{day1.AddDate(0, 0, 1).Add(time.Hour), nil, false, ""},
	}
	for i, s := range steps {
		posts, edits, err := e.runAt(s.at, s.outputs)
		if err != nil {
			t.Fatal(err)
		}
		posted := len(posts)+len(edits) > 0
		if posted != s.posted {
			t.Fatalf("step %d: posted = %v; want %v", i, posted, s.posted)
		}
		if posted {
			summary := append(edits, posts...)[0].Msg.Text
			if !strings.Contains(summary, s.says) {
				t.Errorf("step %d: summary %q lacks %q", i, summary, s.says)
			}
		}
	}
}

func TestPublishFailuresOnlyWhenSomethingFails(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostFailures)
	if posts, _, _ := e.runAt(e.now, nil); len(posts) != 0 {
		t.Fatalf("post: failures posted an all-ok run")
	}
	if posts, _, _ := e.runAt(e.now.Add(time.Hour), map[string]string{"web-01": "99"}); len(posts) == 0 {
		t.Fatalf("post: failures did not post a failing run")
	}
}

func TestPublishGoesOnPastAMissingPlatform(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostAlways, Destination{"slack", "C1"}, Destination{"fake", "ops"})
	posts, _, err := e.runAt(e.now, nil)
	if err == nil || !strings.Contains(err.Error(), `no "slack" connector is configured`) {
		t.Errorf("Publish error = %v; want it to name the missing platform", err)
	}
	if len(posts) == 0 {
		t.Error("the configured platform got nothing because another is missing")
	}
}

// TestPublishWaitsOutARateLimit: a post the platform refuses with
// Retry-After is sent again after that wait, not dropped.
func TestPublishWaitsOutARateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newPostEnv(t, PostAlways)
		e.poster.limited = 2
		start := time.Now()
		posts, _, err := e.runAt(e.now, nil)
		if err != nil || len(posts) < 2 {
			t.Fatalf("posts %d, %v; want the summary and details despite two 429s", len(posts), err)
		}
		if waited := time.Since(start); waited != 4*time.Second {
			t.Errorf("waited %v; want the two Retry-After waits, 4s", waited)
		}
		e.poster.limited = maxRetries + 1
		if _, _, err := e.runAt(e.now.Add(time.Hour), nil); err == nil {
			t.Error("a post refused more than maxRetries times reported no error")
		}
	})
}
