package slack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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

// An answer that ends while its stream's roll-over waits for
// chat.startStream's budget (Tier 2, spent by other answers starting at
// that moment, as when many end and begin at once): its last words go in
// the stream it has, which has life and room left, at once, and the
// waiting start is given up — no stream is started only to hold them,
// and the thread keeps one message, stopped, with the whole answer.
func TestAnswerEndingDuringItsRollOverFinishesInItsStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		ctx := context.Background()
		dest := asker(fake)
		d := dest("watch the logs")
		r := answerOn(ctx, c, d)
		var want strings.Builder
		start := time.Now()
		writeLines(r, &want, start, 14) // until 2m10s
		time.Sleep(time.Until(start.Add(slack.StreamLifetime/2 - time.Second)))
		// Other answers take chat.startStream's burst, and one more waits:
		// the roll-over, due at half the stream's lifetime, queues
		// behind them.
		var others sync.WaitGroup
		for i := range 4 {
			others.Go(func() {
				if _, err := c.StartStream(ctx, dest(fmt.Sprintf("other %d", i)), connectors.Message{}); err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(time.Until(start.Add(slack.StreamLifetime/2 + 2*time.Second)))
		synctest.Wait()
		r.Write("done.")
		want.WriteString("done.")
		r.Close(ctx, nil)
		ended := time.Now()
		others.Wait()
		msgs := fake.Thread("C0OPS", d.Thread)[1:]
		if len(msgs) != 1 || msgs[0].Streaming || strings.TrimSpace(msgs[0].Shown()) != strings.TrimSpace(want.String()) {
			t.Fatalf("the answer shows in %d messages; want one stopped stream with its whole text:\n%s", len(msgs), fake.ThreadText("C0OPS", d.Thread))
		}
		if waited := time.Since(ended); waited > time.Second {
			t.Errorf("the answer's end waited %s for a stream start; want it in the stream it had at once", waited)
		}
		if got := fake.Calls("chat.startStream"); got != 5 {
			t.Errorf("%d chat.startStream calls; want the answer's one and the other 4", got)
		}
	})
}

// A roll-over whose stream starts after Slack ended the stream it was to
// take over from (the answer went on by edits meanwhile, its running
// command's card a block of that message): the new stream takes the
// answer on like any roll-over, and the card stays and ends in the
// message it showed in — no stream holding cards alone, no empty message.
func TestRollOverAfterTheStreamEndedTakesTheAnswerOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		ctx := context.Background()
		dest := asker(fake)
		d := dest("watch the deploy")
		r := answerOn(ctx, c, d)
		var want strings.Builder
		write := func(s string) { want.WriteString(s); r.Write(s) }
		start := time.Now()
		at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))); synctest.Wait() }
		task := connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress}
		writeLines(r, &want, start, 7) // until 1m
		r.TaskLimit(2 * time.Minute)
		r.Task(task)
		writeLines(r, &want, start.Add(70*time.Second), 7) // until 2m10s
		at(slack.StreamLifetime/2 - time.Second)
		var others sync.WaitGroup // the roll-over's start waits behind these
		for i := range 4 {
			others.Go(func() {
				if _, err := c.StartStream(ctx, dest(fmt.Sprintf("other %d", i)), connectors.Message{}); err != nil {
					t.Error(err)
				}
			})
		}
		at(slack.StreamLifetime/2 + time.Second)
		fake.EndStreams() // a person stopped it, say
		write("after the end. ")
		at(slack.StreamLifetime/2 + 15*time.Second)
		write("more. ")
		at(slack.StreamLifetime/2 + 20*time.Second)
		task.Status, task.Output = connectors.TaskComplete, "web-1 · exit 0"
		r.Task(task)
		write("done.")
		r.Close(ctx, nil)
		others.Wait()
		msgs := fake.Thread("C0OPS", d.Thread)[1:]
		var shown strings.Builder
		cards := 0
		for i, m := range msgs {
			if m.Shown() == "" && m.Context() == "" {
				t.Errorf("message %d is empty (cards %+v); want none", i, m.Tasks)
			}
			shown.WriteString(m.Shown())
			cards += len(m.Tasks)
		}
		if len(msgs) < 2 || len(msgs[0].Tasks) != 1 || msgs[0].Tasks[0].Status != "complete" || cards != 1 {
			t.Errorf("want call-1's one card, complete, in the first message, and the answer going on in a new stream:\n%s", fake.ThreadText("C0OPS", d.Thread))
		}
		if got, w := strings.Join(strings.Fields(shown.String()), " "), strings.Join(strings.Fields(want.String()), " "); got != w {
			t.Errorf("the answer shows %q; want %q", got, w)
		}
		threadFaults(t, fake)
	})
}

// asker posts questions from alice in C0OPS; each gives its thread's
// dest, the answer's recipient alice.
func asker(fake *slackfake.Server) func(text string) connectors.Dest {
	return func(text string) connectors.Dest {
		return connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS",
			Thread: fake.Mention("C0OPS", "U0ALICE", "", text).TS, Recipient: connectors.User{ID: "U0ALICE"}}
	}
}

// answerOn is a renderer of an answer in d's thread on c, with the
// workspace's edit budget to itself and no log.
func answerOn(ctx context.Context, c *slack.Connector, d connectors.Dest, buttons ...connectors.Button) *render.Renderer {
	return render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), d, buttons...)
}

// writeLines writes n lines to r, and to want, the k-th k×10 s after
// start. Call it only inside a synctest bubble: its sleeps are the
// bubble's fake clock.
func writeLines(r *render.Renderer, want *strings.Builder, start time.Time, n int) {
	for k := range n {
		time.Sleep(time.Until(start.Add(time.Duration(k) * 10 * time.Second)))
		line := fmt.Sprintf("line %s. ", start.Add(time.Duration(k)*10*time.Second).Format("15:04:05"))
		want.WriteString(line)
		r.Write(line)
	}
}

// threadFaults fails t for what Slack would show wrong or refuse: a card
// left running in a stopped stream, a 429, a block refused.
func threadFaults(t *testing.T, fake *slackfake.Server) {
	t.Helper()
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
	if got := fake.Served429(); got != 0 {
		t.Errorf("Slack answered 429 %d times; want none", got)
	}
	if got := fake.Refusals("invalid_blocks"); got != 0 {
		t.Errorf("Slack refused %d requests as invalid_blocks", got)
	}
}
