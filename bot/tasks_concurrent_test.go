package bot

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// cardAsk is the question of answer n in cardEach's script.
func cardAsk(n int) string { return fmt.Sprintf("check card-%d", n) }

var cardAsked = regexp.MustCompile(`card-(\d+)`)

// cardCommand is the command answer n runs: one that succeeds, one that
// fails, one the policy denies (it runs nothing), in turn.
func cardCommand(n int) (command, status string) {
	switch n % 3 {
	case 1:
		return "exit 3", "error"
	case 2:
		return "mkfs.ext4 /dev/sdz", "error"
	}
	return "echo up", "complete"
}

// cardEach is a model whose every answer says a few words first (so that
// its message starts with text, as most answers do), runs its command,
// and then answers.
func cardEach() agent.Provider {
	return agent.ProviderFunc(func(_ context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
		return func(yield func(agent.StreamEvent) bool) {
			last := req.Messages[len(req.Messages)-1]
			for _, b := range last.Content {
				if b.Type == agent.BlockToolResult {
					text("It ran.")(context.Background(), req, yield)
					return
				}
			}
			var n int
			if m := cardAsked.FindStringSubmatch(userText(req)); m != nil {
				fmt.Sscan(m[1], &n)
			}
			command, _ := cardCommand(n)
			if !yield(agent.StreamEvent{Kind: agent.EventText, Text: "Let me look. "}) {
				return
			}
			callTool(fmt.Sprintf("call-%d", n), "run_command", fmt.Sprintf(`{"target":"local","command":%q}`, command))(context.Background(), req, yield)
		}
	})
}

// Six answers at once on Slack, each running a command: the connector
// starts about one in three as a plain message (spreading the
// workspace's chat.startStream budget), and every command still has
// exactly one task card, ending complete or error as it did, with the
// title it started with — in the plain message itself (a task_card block,
// kept by its edits). Slack's real tiers: no 429, no refused blocks.
func TestConcurrentAnswersEachCommandHasItsCard(t *testing.T) {
	t.Parallel()
	const answers = 6
	fake := slackTestBot(t, botOptions{model: cardEach()})
	roots := make([]string, answers)
	for n := range answers {
		roots[n] = fake.Mention("C0OPS", "U0ALICE", "", cardAsk(n)).Thread
	}
	ended := func(s *slackfake.Server) bool {
		for n, root := range roots {
			cards, still := cardsOf(s, "C0OPS", root)
			_, want := cardCommand(n)
			if !still || cards[fmt.Sprintf("call-%d", n)].Status != want {
				return false
			}
		}
		return true
	}
	if !fake.WaitFor(slackWait, ended) {
		for n, root := range roots {
			t.Logf("answer %d:\n%s", n, fake.ThreadText("C0OPS", root))
		}
		t.Fatal("not every command ended with its card's final status (complete for exit 0, error otherwise)")
	}
	posted := 0 // answers whose card is in a message that never streamed
	for n, root := range roots {
		id := fmt.Sprintf("call-%d", n)
		command, _ := cardCommand(n)
		var shown []slackfake.Task
		for _, m := range fake.Thread("C0OPS", root)[1:] {
			for _, tk := range m.Tasks {
				if tk.ID == id {
					shown = append(shown, tk)
					if m.Markdown == "" {
						posted++
					}
				}
			}
		}
		if len(shown) != 1 {
			t.Errorf("answer %d: %d cards for its command; want exactly one:\n%s", n, len(shown), fake.ThreadText("C0OPS", root))
			continue
		}
		if n%3 == 2 && shown[0].Title != "running `"+command+"` on local…" {
			t.Errorf("answer %d: the denied command's card is titled %q; want the title it started with", n, shown[0].Title)
		}
	}
	if posted == 0 {
		t.Error("every answer's card is in a stream: no answer started as a plain message, so the test does not cover the connector's spread of stream starts")
	}
	if got := fake.Served429(); got != 0 {
		t.Errorf("Slack answered 429 %d times; want none", got)
	}
	if got := fake.Refusals("invalid_blocks"); got != 0 {
		t.Errorf("Slack refused %d messages as invalid_blocks", got)
	}
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
}

// A finished card keeps the title it started with when its call ran no
// command (denied) or several (a group): the end adds how each ran, and
// does not retitle the card to the tool's name.
func TestFinishedCardKeepsItsStartedTitle(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs := []agent.CommandRun{{Host: "web-1", Command: "uptime", Duration: time.Second}, {Host: "web-2", Command: "uptime", ExitCode: 1, Duration: time.Second}}
	for _, tc := range []struct {
		name    string
		started agent.Event
		ended   agent.Event
	}{
		{"denied", agent.Event{Kind: agent.ToolStarted, Tool: "run_command", ToolID: "call-deny", Summary: "running `mkfs.ext4 /dev/sdz` on local…"},
			agent.Event{Kind: agent.ToolFinished, Tool: "run_command", ToolID: "call-deny", Summary: "denied by policy: mkfs.ext4 destroys a file system", IsError: true}},
		{"two commands", agent.Event{Kind: agent.ToolStarted, Tool: "run_command", ToolID: "call-group", Summary: "running `uptime` on group:web…"},
			agent.Event{Kind: agent.ToolFinished, Tool: "run_command", ToolID: "call-group", Summary: "2 hosts, 1 failed", IsError: true, Runs: runs}},
	} {
		root := fake.Mention("C0OPS", "U0ALICE", "", tc.name).TS
		dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root, Recipient: connectors.User{ID: "U0ALICE"}}
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(conn.Limits().EditsPerMinute), nil, nil, dest)
		r.Task(startedTask(tc.started))
		if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
			cards, _ := cardsOf(s, "C0OPS", root)
			return cards[tc.started.ToolID].Title == tc.started.Summary
		}) {
			t.Fatalf("%s: the started card never showed:\n%s", tc.name, fake.ThreadText("C0OPS", root))
		}
		r.Task(finishedTask(tc.ended))
		r.Write("Done.")
		r.Close(t.Context(), nil)
		cards, _ := cardsOf(fake, "C0OPS", root)
		card := cards[tc.ended.ToolID]
		if card.Title != tc.started.Summary || card.Status != "error" || card.Details != tc.ended.Summary {
			t.Errorf("%s: the card ended as %+v; want its started title %q, status error and how it ended", tc.name, card, tc.started.Summary)
		}
		if len(tc.ended.Runs) == 2 && card.Output != "web-1 · exit 0 · 1s\nweb-2 · exit 1 · 1s" {
			t.Errorf("%s: the card's output %q; want each command's host, exit and duration", tc.name, card.Output)
		}
	}
}
