// Command bench streams answers into Discord threads against the fake
// Discord and its limits (5 posts and 5 edits per 5 seconds per channel,
// 50 calls a second in all, 429 with retry_after and the X-RateLimit-*
// headers), through the Discord connector and the bot's renderer, as
// opsbot run streams a model's answer:
//
//	go run ./bot/bench/discord -streams 20 -duration 10m
//
// Each of -streams streams asks in a channel (a mention, so a thread is
// opened from it), writes an answer of -answer characters at -rate
// characters a second into it by the renderer, closes it, and asks again,
// until -duration has passed. It prints the 429s the fake served (and how
// many came after the headers had described their bucket), the longest
// gap between two visible updates of one answer, per stream, and the REST
// calls per answer.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
	"github.com/opsbot/opsbot/store"
)

const token = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhT3xq.k9Vz2pLqR8mW4nXc7YbJd1sFg0Ua5TiOeZrQwE"

func main() {
	streams := flag.Int("streams", 20, "answers streamed at once, each in its own thread")
	duration := flag.Duration("duration", 10*time.Minute, "how long to go on")
	answer := flag.Int("answer", 3000, "characters in one answer (Discord shows 2,000 a message)")
	rate := flag.Int("rate", 60, "characters a second the model writes")
	flag.Parse()
	if err := run(*streams, *duration, *answer, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// cleanups stands in for testing.T's Cleanup.
type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }

// stream is what one stream measured.
type stream struct {
	answers int
	maxGap  time.Duration
	failed  int
}

func run(streams int, duration time.Duration, answer, rate int) error {
	var cl cleanups
	defer func() {
		for _, f := range slices.Backward(cl) {
			f()
		}
	}()
	fake := discordtest.New(&cl, token)
	ch := fake.AddChannel("1000000000000000001", "ops")
	user := fake.NewUser("alice")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	conn, err := discord.New(discord.Config{Token: token, APIURL: fake.URL}, discord.Options{Log: log})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- conn.Start(ctx, func(context.Context, connectors.Event) error { return nil }) }()
	<-conn.Running()
	budget := render.NewEditBudget(conn.Limits().EditsPerMinute)
	deadline := time.Now().Add(duration)
	results := make([]stream, streams)
	var wg sync.WaitGroup
	var answers atomic.Int64
	begin := time.Now()
	for i := range streams {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				gap, ok := answerOnce(ctx, conn, budget, fake, user, ch, i, answer, rate, log)
				results[i].answers++
				answers.Add(1)
				results[i].maxGap = max(results[i].maxGap, gap)
				if !ok {
					results[i].failed++
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	report(fake, results, int(answers.Load()), streams, elapsed, answer, rate)
	return nil
}

// answerOnce asks in the channel and streams one answer into the thread;
// it returns the longest gap between visible updates and whether the
// thread ends showing the whole answer.
func answerOnce(ctx context.Context, conn *discord.Connector, budget *render.EditBudget, fake *discordtest.Fake, user discordtest.User,
	ch string, i, size, rate int, log *slog.Logger) (time.Duration, bool) {
	msg := fake.Mention(user, ch, fmt.Sprintf("stream %d: how are the disks?", i))
	r := render.NewRenderer(ctx, conn, budget, &memRecorder{}, log, connectors.Dest{Platform: discord.Platform, Channel: ch, Thread: msg})
	var mu sync.Mutex
	var maxGap time.Duration
	r.ObserveGaps(func(d time.Duration) {
		mu.Lock()
		maxGap = max(maxGap, d)
		mu.Unlock()
	})
	words := answerText(size)
	tick := time.NewTicker(100 * time.Millisecond)
	per := max(rate/10, 1)
	for len(words) > 0 {
		<-tick.C
		n := min(per, len(words))
		r.Write(words[:n])
		words = words[n:]
	}
	tick.Stop()
	r.Close(ctx, nil)
	mu.Lock()
	defer mu.Unlock()
	var shown strings.Builder
	for _, m := range fake.Messages(msg) {
		if m.Bot {
			shown.WriteString(m.Content)
		}
	}
	return maxGap, strings.ReplaceAll(shown.String(), "\n", "") == strings.ReplaceAll(answerText(size), "\n", "")
}

// answerText is an answer of size characters: words and line breaks.
func answerText(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i%12 == 11 {
			b.WriteString("disk.\n")
		} else {
			b.WriteString("disk ")
		}
	}
	return b.String()[:size]
}

func report(fake *discordtest.Fake, results []stream, answers, streams int, elapsed time.Duration, size, rate int) {
	calls := fake.Calls()
	seen := map[string]bool{} // buckets whose headers the client had read
	var rest, limited, limitedAfter int
	for _, c := range calls {
		if c.Route == "GET /gateway" || c.Route == "GET /users/@me" {
			continue
		}
		rest++
		key := c.Route + " " + c.Major
		if c.Status == 429 {
			limited++
			if seen[key] {
				limitedAfter++
			}
		}
		seen[key] = true
	}
	gaps := make([]time.Duration, len(results))
	failed := 0
	for i, r := range results {
		gaps[i] = r.maxGap
		failed += r.failed
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	fmt.Printf("streams %d, %s, answers of %d characters at %d characters/s\n", streams, elapsed.Round(time.Second), size, rate)
	fmt.Printf("answers: %d (%d not shown whole)\n", answers, failed)
	fmt.Printf("429s served: %d, of which after the bucket's headers were seen: %d\n", limited, limitedAfter)
	fmt.Printf("longest gap between visible updates, per stream: min %s, median %s, max %s\n",
		gaps[0].Round(time.Millisecond), gaps[len(gaps)/2].Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond))
	fmt.Printf("REST calls: %d, per answer %.1f\n", rest, float64(rest)/float64(max(answers, 1)))
}

// memRecorder keeps nothing: the benchmark measures the platform side.
type memRecorder struct{ next atomic.Int64 }

func (m *memRecorder) RecordStreaming(_ context.Context, p store.PostedMessage) (store.PostedMessage, error) {
	p.ID = m.next.Add(1)
	return p, nil
}
func (m *memRecorder) PostedStreaming(context.Context, int64, string, string) error { return nil }
func (m *memRecorder) UpdateStreamingText(context.Context, int64, string) error     { return nil }
func (m *memRecorder) FinishStreaming(context.Context, int64) error                 { return nil }
