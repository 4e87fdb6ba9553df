package bot

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// stoppedAgent is a model that runs a long command, then, asked for a
// summary once stopped, gives one.
func stoppedAgent() *model {
	return &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"sleep 600"}`),
		text("So far: the sleep was running."),
	}}
}

// A Stop of an agent's turn in the web chat: the real command ends, the
// status line no longer says it runs but that it stopped, and the answer
// is the model's summary with who stopped it.
func TestStoppedAgentTurnSaysStoppedAndSummarizes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, stoppedAgent())
	h.say("alice", "t1", "wait a while please")
	const running = "running `sleep 600` on local…"
	h.eventually("the running line", h.has("t1", running))
	answer, ref, _ := h.find("t1", running)
	h.click("alice", answer, ref, ActionStop)
	h.eventually("the stop note", h.has("t1", "stopped by @alice"))
	m, _, _ := h.find("t1", "stopped by @alice")
	if !strings.HasPrefix(m.msg.Text, "So far: the sleep was running.") {
		t.Errorf("the stopped answer is not the model's summary: %q", m.msg.Text)
	}
	if strings.Contains(m.msg.Context, "running `sleep") || !strings.Contains(m.msg.Context, "`sleep 600` on local: stopped") {
		t.Errorf("the status line reads %q; want the command stopped", m.msg.Context)
	}
}

// The same on Slack: the context line of the stopped answer says the
// command stopped, not that it runs.
func TestSlackStoppedAgentTurnSaysStopped(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBot(t, conn, approvals.GateConfig{}, stoppedAgent())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Start(ctx, b.Handle) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-fake.Connected():
	case <-time.After(slackWait):
		t.Fatal("the connector never opened a Socket Mode connection")
	}
	root := fake.Mention("C0OPS", "U0ALICE", "", "wait a while please")
	var answer string
	shown := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, m := range s.Thread("C0OPS", root.Thread) {
			if m.Bot && strings.Contains(m.Context(), "running `sleep 600` on local…") && slices.Contains(m.Buttons(), ActionStop) {
				answer = m.TS
				return true
			}
		}
		return false
	})
	if !shown {
		t.Fatalf("no running line with Stop:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	if fake.Click("C0OPS", answer, "U0ALICE", ActionStop) == "" {
		t.Fatal("the answer has no Stop button to click")
	}
	// The command's card, in the answer's stream, ends saying it stopped;
	// Stop, shown below the stream, goes.
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		m, ok := s.Message("C0OPS", answer)
		cards, _ := cardsOf(s, "C0OPS", root.Thread)
		for _, c := range cards {
			if strings.Contains(c.Title, "`sleep 600` on local") && c.Status == "error" && strings.Contains(c.Details, "stopped") {
				return ok && len(m.Buttons()) == 0
			}
		}
		return false
	})
	if !ended {
		t.Fatalf("the stopped answer does not say the command stopped:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	for _, m := range fake.Thread("C0OPS", root.Thread) {
		if strings.Contains(m.Context(), "running `sleep") {
			t.Errorf("a context line still says the command runs: %q", m.Context())
		}
	}
}
