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
// cards in those messages (task_card blocks, kept by their edits): the
// next start ends each such message with its cards kept and those still
// running closed, never left spinning and never dropped.
func TestRestartClosesThePostedAnswersCards(t *testing.T) {
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
	posted := func(s *slackfake.Server) map[string]string { // running cards shown in a posted answer: its message
		out := map[string]string{}
		for n, root := range roots {
			for _, msg := range s.Thread("C0OPS", root)[1:] {
				for _, tk := range msg.Tasks {
					if tk.ID == fmt.Sprintf("call-%d", n) && tk.Status == "in_progress" && msg.Markdown == "" && !msg.Streaming {
						out[root] = msg.TS
					}
				}
			}
		}
		return out
	}
	running := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for n, root := range roots {
			if cards, _ := cardsOf(s, "C0OPS", root); cards[fmt.Sprintf("call-%d", n)].Status != "in_progress" {
				return false
			}
		}
		return len(posted(s)) > 0
	})
	if !running {
		for n, root := range roots {
			t.Logf("answer %d:\n%s", n, fake.ThreadText("C0OPS", root))
		}
		t.Fatal("not every command's card in progress, with one in an answer that began as a plain message")
	}
	cut := posted(fake)
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
	for root, ts := range cut {
		for _, msg := range fake.Thread("C0OPS", root) {
			if msg.TS == ts && (len(msg.Tasks) != 1 || msg.Tasks[0].Status != "error") {
				t.Errorf("the posted answer's cards after the restart: %+v; want its command's card kept, ended as not finished:\n%s", msg.Tasks, fake.ThreadText("C0OPS", root))
			}
		}
	}
}
