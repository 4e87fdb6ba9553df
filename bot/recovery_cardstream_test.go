package bot

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A crash while answers that began as plain messages (Slack spreads its
// stream starts when many answer at once) show their running commands'
// cards in a stream of their own below: those cards are on record with
// that stream, and the next start closes them as it closes an answer
// stream's. Before, they were recorded with the plain message above, so
// recovery stopped the card stream with its cards still spinning.
func TestRestartClosesTheCardStreamsCards(t *testing.T) {
	t.Parallel()
	const answers = 6
	waits := make([]string, answers)
	for n := range answers {
		fifo := filepath.Join(t.TempDir(), "go")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		waits[n] = "cat " + fifo
		// Let a command still reading go, and never wait for one the
		// restart ended (the fresh process ends what the dead one left).
		t.Cleanup(func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.WriteString("done\n")
				f.Close()
			}
		})
	}
	m := agent.ProviderFunc(func(_ context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
		return func(yield func(agent.StreamEvent) bool) {
			for _, b := range req.Messages[len(req.Messages)-1].Content {
				if b.Type == agent.BlockToolResult {
					text("It ran.")(context.Background(), req, yield)
					return
				}
			}
			var n int
			if m := cardAsked.FindStringSubmatch(userText(req)); m != nil {
				fmt.Sscan(m[1], &n)
			}
			if !yield(agent.StreamEvent{Kind: agent.EventText, Text: "Let me look. "}) {
				return
			}
			callTool(fmt.Sprintf("call-%d", n), "run_command", fmt.Sprintf(`{"target":"local","command":%q}`, waits[n]))(context.Background(), req, yield)
		}
	})
	fake, dir, dead, _ := severableSlackBot(t, m)
	roots := make([]string, answers)
	for n := range answers {
		roots[n] = fake.Mention("C0OPS", "U0ALICE", "", cardAsk(n)).Thread
	}
	below := func(s *slackfake.Server) int { // running cards shown below an answer's first message
		count := 0
		for n, root := range roots {
			for i, msg := range s.Thread("C0OPS", root)[1:] {
				for _, tk := range msg.Tasks {
					if tk.ID == fmt.Sprintf("call-%d", n) && tk.Status == "in_progress" && i > 0 {
						count++
					}
				}
			}
		}
		return count
	}
	running := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for n, root := range roots {
			if cards, _ := cardsOf(s, "C0OPS", root); cards[fmt.Sprintf("call-%d", n)].Status != "in_progress" {
				return false
			}
		}
		return below(s) > 0
	})
	if !running {
		for n, root := range roots {
			t.Logf("answer %d:\n%s", n, fake.ThreadText("C0OPS", root))
		}
		t.Fatal("not every command's card in progress, with one in a card stream below its answer")
	}
	dead.cut.Store(true) // kill -9: nothing more of this process reaches Slack

	fresh, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
		slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	_, stopFresh := startBot(t, dir, fresh, botOptions{held: true})
	t.Cleanup(stopFresh)
	closed := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, root := range roots {
			for _, msg := range s.Thread("C0OPS", root) {
				for _, tk := range msg.Tasks {
					if tk.Status == "pending" || tk.Status == "in_progress" || msg.Streaming {
						return false
					}
				}
			}
		}
		return true
	})
	if !closed {
		for n, root := range roots {
			t.Errorf("answer %d still shows a card spinning or a stream open after the restart:\n%s", n, fake.ThreadText("C0OPS", root))
		}
	}
	for _, msg := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", msg.TS, msg.OpenTasks())
	}
}
