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
		dest := func(text string) connectors.Dest {
			return connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS",
				Thread: fake.Mention("C0OPS", "U0ALICE", "", text).TS, Recipient: connectors.User{ID: "U0ALICE"}}
		}
		d := dest("watch the logs")
		r := render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), d)
		var want strings.Builder
		start := time.Now()
		for k := range 14 { // a line every 10 s, until 2m10s
			time.Sleep(time.Until(start.Add(time.Duration(k) * 10 * time.Second)))
			delta := fmt.Sprintf("line %d. ", k)
			want.WriteString(delta)
			r.Write(delta)
		}
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
