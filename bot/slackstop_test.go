package bot

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// slackWait bounds a wait on the fake Slack: a guard against a hang, not
// a pace.
const slackWait = 60 * time.Second

// A `run` on Slack of a command that prints nothing for its whole run:
// before it ends, the thread shows "running `cmd` on host…" and Stop (in
// what the bot sent Slack, native streaming on), and the requester's
// click on Stop, delivered through Socket Mode, ends the real process.
func TestSlackSilentRunShowsStopAndStops(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBot(t, conn, approvals.GateConfig{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Start(ctx, b.Handle) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-fake.Connected():
	case <-time.After(slackWait):
		t.Fatal("the connector never opened a Socket Mode connection")
	}
	root := fake.Mention("C0OPS", "U0ALICE", "", "run local sleep 600")
	const running = "running `sleep 600` on local…"
	var answer string
	shown := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, m := range s.Thread("C0OPS", root.Thread) {
			if m.Bot && m.Context() == running && slices.Contains(m.Buttons(), ActionStop) {
				answer = m.TS
				return true
			}
		}
		return false
	})
	if !shown {
		t.Fatalf("the running command shows no running line and Stop:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	if !sentBlocks(fake, running, `"action_id":"`+ActionStop+`"`) {
		t.Errorf("no request to Slack carried the running line and Stop")
	}
	if fake.Click("C0OPS", answer, "U0ALICE", ActionStop) == "" {
		t.Fatal("the answer has no Stop button to click")
	}
	const stopped = "⏹ `sleep 600` on local: stopped by"
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		m, ok := s.Message("C0OPS", answer)
		return ok && strings.HasPrefix(m.Context(), stopped) && len(m.Buttons()) == 0
	})
	if !ended {
		t.Fatalf("Stop did not end the command:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
}

// sentBlocks reports whether a request the fake received carried blocks
// holding every one of want.
func sentBlocks(fake *slackfake.Server, want ...string) bool {
	return slices.ContainsFunc(fake.Sent(), func(body string) bool {
		form, err := url.ParseQuery(body)
		blocks := form.Get("blocks")
		return err == nil && !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(blocks, w) })
	})
}
