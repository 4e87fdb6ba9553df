package bot

import (
	"context"
	"slices"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A person presses Stop while an agent's command runs on Slack: the
// command's card, shown in the answer's stream, does not stay in progress
// once that stream has stopped (Slack no longer changes its cards) — the
// stop carried its final status.
func TestSlackStopLeavesNoCardInProgress(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-sleep", "run_command", `{"target":"local","command":"sleep 600"}`),
		text("Stopped."),
	}}
	fake := slackTestBot(t, botOptions{model: m})
	root := fake.Mention("C0OPS", "U0ALICE", "", "wait on web")
	var answer string
	shown := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, msg := range s.Thread("C0OPS", root.Thread) {
			if msg.Bot && slices.Contains(msg.Buttons(), ActionStop) && len(msg.Tasks) > 0 {
				answer = msg.TS
				return true
			}
		}
		return false
	})
	if !shown {
		t.Fatalf("the running command's card shows no Stop:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	if fake.Click("C0OPS", answer, "U0ALICE", ActionStop) == "" {
		t.Fatal("the answer has no Stop button to click")
	}
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		msg, _ := s.Message("C0OPS", answer)
		return !msg.Streaming && len(msg.Buttons()) == 0
	})
	if !ended {
		t.Fatalf("Stop did not end the answer:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	msg, _ := fake.Message("C0OPS", answer)
	if i := slices.IndexFunc(msg.Tasks, func(tk slackfake.Task) bool { return tk.ID == "call-sleep" }); i < 0 || msg.Tasks[i].Status != "error" {
		t.Errorf("the stopped command's cards %+v; want call-sleep ended as error", msg.Tasks)
	}
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
}
