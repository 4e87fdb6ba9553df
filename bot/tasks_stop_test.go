package bot

import (
	"context"
	"slices"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A person presses Stop, shown below the answer's stream, while an
// agent's command runs on Slack: the command's card, shown in the
// answer's stream, ends as an error (it was killed), not in progress, and
// Stop goes.
func TestSlackStopLeavesNoCardInProgress(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-sleep", "run_command", `{"target":"local","command":"sleep 600"}`),
		text("Stopped."),
	}}
	fake := slackTestBot(t, botOptions{model: m})
	root := fake.Mention("C0OPS", "U0ALICE", "", "wait on web")
	var stop, answer string
	shown := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		c, ok := stopShown(s, "C0OPS", root.Thread)
		a, carded := answerStream(s, "C0OPS", root.Thread)
		stop, answer = c.TS, a.TS
		return ok && carded && a.Streaming
	})
	if !shown {
		t.Fatalf("the running command's card shows no Stop below it:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	if fake.Click("C0OPS", stop, "U0ALICE", ActionStop) == "" {
		t.Fatal("the answer has no Stop button to click")
	}
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		msg, _ := s.Message("C0OPS", answer)
		_, stopping := stopShown(s, "C0OPS", root.Thread)
		return !msg.Streaming && !stopping
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
