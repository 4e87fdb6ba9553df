package slack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// loadMinutes is how long each load run streams (fake time): 3 minutes in
// a test run (past the streams' first roll-over), OPSBOT_SLACK_LOAD_MINUTES (make bench: 10) for the figures of
// docs/BENCHMARKS.md.
func loadMinutes(t *testing.T) time.Duration {
	if s := os.Getenv("OPSBOT_SLACK_LOAD_MINUTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("OPSBOT_SLACK_LOAD_MINUTES=%q: %v", s, err)
		}
		return time.Duration(n) * time.Minute
	}
	return 3 * time.Minute // past a roll-over (half a stream's lifetime)
}

// Concurrent answers in one workspace against the fake's real tier limits,
// on synctest's clock (the renderer's pacing, the connector's budgets and
// the fake's sliding windows all run on it): Slack never answers 429, and
// each thread ends showing exactly its deltas. The longest time a person
// watching a thread saw nothing change is logged per run (p50 and max
// over the streams), native streaming and chat.update alike.
func TestConcurrentAnswersWithinTierLimits(t *testing.T) {
	d := loadMinutes(t)
	for _, native := range []bool{true, false} {
		for _, n := range []int{5, 20, 32} {
			name := fmt.Sprintf("native=%v/streams=%d", native, n)
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { loadRun(t, name, native, n, d) })
			})
		}
	}
}

func loadRun(t *testing.T, name string, native bool, n int, d time.Duration) {
	fake, c := localConn(t, slack.Config{NativeStreaming: &native})
	budget := render.NewEditBudget(c.Limits().EditsPerMinute)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gaps := make([]time.Duration, n)
	firsts := make([]time.Duration, n) // first visible update, after the answer began
	lags := make([]time.Duration, n)   // the last visible update, after the model ended
	wants := make([]string, n)
	threads := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		root := fake.Mention("C0OPS", "U0ALICE", "", fmt.Sprintf("question %d", i))
		threads[i] = root.TS
		wg.Go(func() {
			dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
				Recipient: connectors.User{ID: "U0ALICE"}}
			ctx := context.Background()
			r := render.NewRenderer(ctx, c, budget, nil, log, dest)
			var mu sync.Mutex
			start := time.Now()
			var last time.Time
			r.ObserveGaps(func(g time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				if last.IsZero() {
					firsts[i] = time.Since(start) - g
				}
				last = time.Now()
				gaps[i] = max(gaps[i], g)
			})
			var want strings.Builder
			for k := 0; time.Since(start) < d; k++ {
				delta := fmt.Sprintf("w%d ", k%100)
				want.WriteString(delta)
				r.Write(delta)
				time.Sleep(500 * time.Millisecond)
			}
			ended := time.Now()
			r.Close(ctx, nil)
			mu.Lock()
			lags[i] = max(last.Sub(ended), 0)
			mu.Unlock()
			wants[i] = want.String()
		})
	}
	wg.Wait()
	for i, th := range threads {
		var shown strings.Builder
		for _, m := range fake.Thread("C0OPS", th)[1:] {
			shown.WriteString(m.Shown())
		}
		if shown.String() != wants[i] {
			t.Errorf("stream %d shows %d characters, its deltas were %d: the final text must equal them", i, shown.Len(), len(wants[i]))
		}
	}
	if got := fake.Served429(); got != 0 {
		t.Errorf("Slack answered 429 %d times; want none", got)
	}
	slices.Sort(gaps)
	if limit := gapTarget(native, n); limit > 0 && gaps[n-1] > limit {
		t.Errorf("a thread showed nothing new for %s; the target at %d answers is %s", gaps[n-1], n, limit)
	}
	slices.Sort(firsts)
	slices.Sort(lags)
	t.Logf("%s, %s of fake time: 429s %d; longest gap between visible updates per stream p50 %s, max %s; first visible update max %s; final lag max %s; calls: postMessage %d, update %d, startStream %d, appendStream %d, stopStream %d",
		name, d, fake.Served429(), gaps[len(gaps)/2], gaps[len(gaps)-1], firsts[n-1], lags[n-1], fake.Calls("chat.postMessage"), fake.Calls("chat.update"),
		fake.Calls("chat.startStream"), fake.Calls("chat.appendStream"), fake.Calls("chat.stopStream"))
}

// gapTarget is the longest a thread may show nothing new while its answer
// streams natively (issue 32): the tiers allow ~9 s at 20 answers. 0: no
// target.
func gapTarget(native bool, n int) time.Duration {
	switch {
	case !native:
		return 0
	case n <= 5:
		return 3 * time.Second
	case n <= 20:
		return 10 * time.Second
	}
	return 0
}
