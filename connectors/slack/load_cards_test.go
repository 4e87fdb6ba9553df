package slack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
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

// Concurrent answers that each run a command, against the fake's real
// tiers on synctest's clock: about one answer in three starts as a plain
// message (the connector spreads chat.startStream's Tier-2 budget), and
// still every command has exactly one task card, ending complete, while
// Slack never answers 429 and each thread ends showing exactly its
// deltas.
func TestConcurrentAnswersWithCommandsKeepTheirCards(t *testing.T) {
	d := loadMinutes(t)
	for _, n := range []int{5, 20} {
		name := fmt.Sprintf("streams=%d", n)
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { cardLoadRun(t, name, n, d) })
		})
	}
}

// Each answer's command starts cardAfter into it and ends cardRuns later.
const (
	cardAfter = 20 * time.Second
	cardRuns  = 10 * time.Second
)

// cardLoadRun runs n answers with a command each for d. Call it only
// inside a synctest bubble: its sleeps are the bubble's fake clock.
func cardLoadRun(t *testing.T, name string, n int, d time.Duration) {
	native := true
	fake, c := localConn(t, slack.Config{NativeStreaming: &native})
	budget := render.NewEditBudget(c.Limits().EditsPerMinute)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gaps := make([]time.Duration, n)
	wants := make([]string, n)
	threads := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		threads[i] = fake.Mention("C0OPS", "U0ALICE", "", fmt.Sprintf("question %d", i)).TS
		wg.Go(func() {
			dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: threads[i],
				Recipient: connectors.User{ID: "U0ALICE"}}
			ctx := context.Background()
			r := render.NewRenderer(ctx, c, budget, nil, log, dest)
			var mu sync.Mutex
			r.ObserveGaps(func(g time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				gaps[i] = max(gaps[i], g)
			})
			card := connectors.Task{ID: "cmd", Title: "running `uptime` on web-1…", Status: connectors.TaskInProgress}
			start := time.Now()
			var want strings.Builder
			for k := 0; time.Since(start) < d; k++ {
				switch time.Since(start).Truncate(500 * time.Millisecond) {
				case cardAfter:
					r.TaskLimit(time.Minute) // as the bot does: run_command's default limit
					r.Task(card)
				case cardAfter + cardRuns:
					r.Task(connectors.Task{ID: "cmd", Title: card.Title, Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 10s"})
				}
				delta := fmt.Sprintf("w%d ", k%100)
				want.WriteString(delta)
				r.Write(delta)
				time.Sleep(500 * time.Millisecond)
			}
			r.Close(ctx, nil)
			wants[i] = want.String()
		})
	}
	// How long after its command started each answer first shows it (its
	// card, or its line while a card stream starts): logged, watched on
	// the bubble's clock every 100 ms.
	shownAfter := make([]time.Duration, n)
	wg.Go(func() {
		start := time.Now()
		time.Sleep(cardAfter)
		for i := range shownAfter {
			shownAfter[i] = -1
		}
		for time.Since(start) < cardAfter+cardRuns {
			for i, th := range threads {
				for _, m := range fake.Thread("C0OPS", th)[1:] {
					if shownAfter[i] < 0 && (len(m.Tasks) > 0 || strings.Contains(m.Context(), "uptime")) {
						shownAfter[i] = time.Since(start) - cardAfter
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	wg.Wait()
	late := 0 // commands not shown while they ran
	for i, d := range shownAfter {
		if d < 0 {
			late++
			shownAfter[i] = cardRuns
		}
	}
	slices.Sort(shownAfter)
	posted := 0 // answers that began as a plain message
	for i, th := range threads {
		var shown strings.Builder
		var cards []slackfake.Task
		for _, m := range fake.Thread("C0OPS", th)[1:] {
			shown.WriteString(m.Shown())
			cards = append(cards, m.Tasks...)
		}
		if len(cards) != 1 || cards[0].Status != "complete" {
			t.Errorf("stream %d shows cards %+v; want its command's one card, complete", i, cards)
		}
		if first := fake.Thread("C0OPS", th)[1]; first.Markdown == "" {
			posted++ // it never streamed: its card is a block of its edits
		}
		if shown.String() != wants[i] {
			t.Errorf("stream %d shows %d characters, its deltas were %d: the final text must equal them", i, shown.Len(), len(wants[i]))
		}
	}
	if got := fake.Served429(); got != 0 {
		t.Errorf("Slack answered 429 %d times; want none", got)
	}
	if got := fake.Refusals("invalid_blocks"); got != 0 {
		t.Errorf("Slack refused %d requests as invalid_blocks", got)
	}
	// Issue 32's targets for the longest gap hold with a command in every
	// answer as with text alone (TestConcurrentAnswersWithinTierLimits): a
	// card in its answer's stream goes with its text
	// (TestCardsCostNoAppendOfTheirOwn), and one in an answer that began
	// as a plain message goes with its edits (docs/SLACK.md).
	slices.Sort(gaps)
	if want := gapTarget(true, n); gaps[n-1] > want {
		t.Errorf("longest gap between visible updates %s; want at most %s with %d answers", gaps[n-1], want, n)
	}
	if n >= 3 && posted == 0 {
		t.Errorf("no answer began as a plain message: the test does not cover cards in an answer going on by edits")
	}
	t.Logf("%s with a command each, %s of fake time: %d began as a plain message; 429s %d; longest gap per stream p50 %s, max %s; command shown after its start p50 %s, max %s (%d not while it ran); calls: postMessage %d, update %d, startStream %d, appendStream %d, stopStream %d",
		name, d, posted, fake.Served429(), gaps[n/2], gaps[n-1], shownAfter[n/2], shownAfter[n-1], late, fake.Calls("chat.postMessage"), fake.Calls("chat.update"),
		fake.Calls("chat.startStream"), fake.Calls("chat.appendStream"), fake.Calls("chat.stopStream"))
}

// A posted answer (it opened with a status line) while chat.startStream's
// budget is spent by other answers: its command's card shows in the post
// itself within a second, by the edit that carries its words (a task_card
// block), never as a status line, and no stream is started for it.
func TestPostedAnswerShowsItsCardInItsOwnMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		ctx := context.Background()
		dest := asker(fake)
		for i := range 4 { // the start budget's burst, and one more
			if _, err := c.StartStream(ctx, dest(fmt.Sprintf("other %d", i)), connectors.Message{}); err != nil {
				t.Fatal(err)
			}
		}
		d := dest("why is web slow")
		stop := connectors.Button{ActionID: "stop", Label: "Stop"}
		r := answerOn(ctx, c, d, stop)
		defer r.Close(ctx, nil)
		r.Status("checking the load balancer", false) // opens as a post, with its line
		time.Sleep(time.Second)
		synctest.Wait()
		r.Task(connectors.Task{ID: "call-1", Title: "running `uptime` on web-1…", Status: connectors.TaskInProgress})
		time.Sleep(time.Second)
		synctest.Wait()
		msgs := fake.Thread("C0OPS", d.Thread)[1:]
		if len(msgs) != 1 || len(msgs[0].Tasks) != 1 || msgs[0].Tasks[0].Status != "in_progress" || strings.Contains(msgs[0].Context(), "uptime") {
			t.Fatalf("a second after the command started, want its card in the post (and no line for it):\n%s", fake.ThreadText("C0OPS", d.Thread))
		}
		r.Task(connectors.Task{ID: "call-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 1s"})
		r.Write("Load is fine.")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		msgs = fake.Thread("C0OPS", d.Thread)[1:]
		if len(msgs) != 1 || len(msgs[0].Tasks) != 1 || msgs[0].Tasks[0].Status != "complete" || msgs[0].Shown() != "Load is fine." {
			t.Errorf("want one message, its card complete above its words:\n%s", fake.ThreadText("C0OPS", d.Thread))
		}
		if got := fake.Calls("chat.startStream"); got != 4 {
			t.Errorf("%d chat.startStream calls; want only the 4 other answers'", got)
		}
	})
}

// A command that starts late in its stream's life, and runs longer than
// the stream has left: its card starts in a new stream rather than in the
// one about to stop, so it has exactly one card, from its start to its
// true end. Both the answer's text stream and a card stream (an answer
// that opened as a post) are checked; 0 x 429, 0 invalid_blocks.
func TestCardStartsInAStreamWithLifeForItsCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(r *render.Renderer) // how the answer opens
		late time.Duration            // into the answer, when the command starts
		runs time.Duration
	}{
		// The text stream rolls over on schedule at half its lifetime
		// (slack.StreamLifetime, 4m30s) at the earliest
		// (render.EditBudget.RollSlot): the command starts just before, and
		// runs past the end of Slack's lifetime for the stream (the fake's,
		// 5 minutes).
		{"text stream", func(r *render.Renderer) { r.Write("Checking the deploy.") }, 2*time.Minute + 10*time.Second, 2*time.Minute + 55*time.Second},
		// The card stream, opened by a first command 1 s in, lives on: the
		// command starts 12 s before it must stop.
		{"card stream", func(r *render.Renderer) {
			r.Status("checking the deploy", false) // opens as a post
			time.Sleep(time.Second)
			synctest.Wait()
			r.Task(connectors.Task{ID: "call-0", Title: "`uptime` on web-1", Status: connectors.TaskInProgress})
			time.Sleep(2 * time.Second)
			synctest.Wait()
			r.Task(connectors.Task{ID: "call-0", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 2s"})
		}, 4*time.Minute + 10*time.Second, 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake, c := localConn(t, slack.Config{})
				ctx := context.Background()
				d := asker(fake)("watch the deploy")
				r := answerOn(ctx, c, d)
				start := time.Now()
				tc.open(r)
				time.Sleep(time.Until(start.Add(tc.late)))
				synctest.Wait()
				task := connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress}
				r.Task(task)
				time.Sleep(tc.runs)
				synctest.Wait()
				task.Status, task.Output = connectors.TaskComplete, "web-1 · exit 0 · "+tc.runs.String()
				r.Task(task)
				r.Write(" Deployed.")
				r.Close(ctx, nil)
				synctest.Wait()
				var cards []slackfake.Task
				for _, m := range fake.Thread("C0OPS", d.Thread)[1:] {
					for _, tk := range m.Tasks {
						if tk.ID == "call-1" {
							cards = append(cards, tk)
						}
					}
				}
				if len(cards) != 1 || cards[0].Status != "complete" || cards[0].Details != "" {
					t.Errorf("call-1's cards %+v; want exactly one, complete:\n%s", cards, fake.ThreadText("C0OPS", d.Thread))
				}
				threadFaults(t, fake)
			})
		})
	}
}

// A command that outlives any stream (a limit longer than Slack's
// lifetime for one), in an answer that opened as a post: its card is in
// the post, which no lifetime ends, so it is one card from its start to
// its true end, never "its end shows below", and none is left running.
func TestPostedAnswersCardOutlivesAnyStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		ctx := context.Background()
		d := asker(fake)("watch the deploy")
		r := answerOn(ctx, c, d)
		r.Status("checking the deploy", false) // opens as a post
		time.Sleep(time.Second)
		synctest.Wait()
		task := connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress}
		r.Task(task)
		time.Sleep(7 * time.Minute)
		synctest.Wait()
		task.Status, task.Output = connectors.TaskComplete, "web-1 · exit 0"
		r.Task(task)
		r.Write("Deployed.")
		r.Close(ctx, nil)
		synctest.Wait()
		var cards []slackfake.Task
		for _, m := range fake.Thread("C0OPS", d.Thread)[1:] {
			cards = append(cards, m.Tasks...)
		}
		if len(cards) != 1 || cards[0].Status != "complete" || cards[0].Details != "" || cards[0].Output != "web-1 · exit 0" {
			t.Errorf("call-1's cards %+v; want one, complete:\n%s", cards, fake.ThreadText("C0OPS", d.Thread))
		}
		if got := fake.Calls("chat.startStream"); got != 0 {
			t.Errorf("%d chat.startStream calls; want none: the post holds its card", got)
		}
	})
}

// An answer that opened as a post with a status line, whose next edits
// are refused by rate limits (429, Retry-After 5 s): its cards are in the
// post's edits, which are tried again once the wait is over, and each
// command is a card with its true end, none shown as a line.
func TestPostedAnswerRateLimitedStillShowsCards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		ctx := context.Background()
		d := asker(fake)("restart the workers")
		r := answerOn(ctx, c, d)
		pause := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}
		r.Status("restarting the workers", false) // opens as a post, with its line
		pause(2 * time.Second)
		// The next two calls (the post's edits) are answered 429.
		fake.RateLimit(5 * time.Second)
		fake.RateLimit(5 * time.Second)
		ends := map[string]connectors.TaskStatus{"call-1": connectors.TaskComplete, "call-2": connectors.TaskError}
		for _, id := range []string{"call-1", "call-2"} {
			r.Task(connectors.Task{ID: id, Title: "`systemctl restart worker` on " + id, Status: connectors.TaskInProgress})
			pause(3 * time.Second)
			r.Task(connectors.Task{ID: id, Status: ends[id], Output: "web-1 · 3s"})
			pause(3 * time.Second)
		}
		r.Close(ctx, nil)
		synctest.Wait()
		got := map[string]string{}
		n := 0
		for _, m := range fake.Thread("C0OPS", d.Thread)[1:] {
			for _, tk := range m.Tasks {
				got[tk.ID] = tk.Status
				n++
			}
			if strings.Contains(m.Context(), "systemctl") {
				t.Errorf("message %s shows a command as a line: %q", m.TS, m.Context())
			}
		}
		if n != 2 || got["call-1"] != "complete" || got["call-2"] != "error" {
			t.Errorf("cards %v (%d); want call-1 complete, call-2 error, one card each:\n%s", got, n, fake.ThreadText("C0OPS", d.Thread))
		}
		for _, m := range fake.StoppedOpen() {
			t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
		}
		if post := fake.Thread("C0OPS", d.Thread)[1]; post.Context() != "restarting the workers" {
			t.Errorf("the post shows %q; want its own status line, without the commands' lines", post.Context())
		}
		if got := fake.Served429(); got != 2 {
			t.Errorf("the fake answered 429 %d times; want the 2 forced", got)
		}
	})
}

// An answer streaming its text costs the same chat.appendStream calls
// whether or not a command runs in it: the command's card goes in the
// text's own appends (chunks of both kinds in one call), not in appends
// of its own, which would take turns from every answer in the workspace
// (the appends' budget is the workspace's). Its one card still shows,
// started, then complete.
func TestCardsCostNoAppendOfTheirOwn(t *testing.T) {
	run := func(t *testing.T, command bool) (appends int) {
		synctest.Test(t, func(t *testing.T) {
			fake, c := localConn(t, slack.Config{})
			ctx := context.Background()
			d := asker(fake)("why is web slow")
			r := answerOn(ctx, c, d)
			var want strings.Builder
			for k := range 60 { // 30 s, a delta every 500 ms
				switch {
				case command && k == 20:
					r.Task(connectors.Task{ID: "cmd", Title: "running `uptime` on web-1…", Status: connectors.TaskInProgress})
				case command && k == 40:
					r.Task(connectors.Task{ID: "cmd", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 10s"})
				}
				delta := fmt.Sprintf("w%d ", k)
				want.WriteString(delta)
				r.Write(delta)
				time.Sleep(500 * time.Millisecond)
			}
			r.Close(ctx, nil)
			synctest.Wait()
			msgs := fake.Thread("C0OPS", d.Thread)[1:]
			if len(msgs) != 1 || msgs[0].Shown() != want.String() {
				t.Fatalf("the answer shows:\n%s\nwant its deltas in one message", fake.ThreadText("C0OPS", d.Thread))
			}
			if tasks := msgs[0].Tasks; command && (len(tasks) != 1 || tasks[0].Status != "complete" || tasks[0].Updates != 2) {
				t.Errorf("cards %+v; want the command's one card, started then complete", tasks)
			}
			appends = fake.Calls("chat.appendStream")
		})
		return appends
	}
	text, both := run(t, false), run(t, true)
	if both != text {
		t.Errorf("the answer made %d appends with a command, %d without; want as many: its card goes with its text", both, text)
	}
	t.Logf("appends: %d with text alone, %d with a command", text, both)
}
