package bot

import (
	"context"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// slowThenCommands is a model slow to its first delta: it says nothing
// until placed shows the answer's placeholder (past the renderer's 2 s),
// then runs a command that succeeds and one that fails, then answers.
func slowThenCommands(placed <-chan struct{}) *model {
	call := func(id, input string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
		return func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
			if !yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{Type: agent.BlockToolUse, ID: id, Name: "run_command", Input: []byte(input)}}) {
				return
			}
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopToolUse})
		}
	}
	first := call("call-ok", `{"target":"local","command":"echo up"}`)
	return &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
			select {
			case <-placed:
			case <-ctx.Done():
				return
			}
			first(ctx, req, yield)
		},
		call("call-fail", `{"target":"local","command":"exit 3"}`),
		text("Both ran."),
	}}
}

// A model slower to its first word than the placeholder's 2 s: the
// placeholder is the answer's stream, so each command it then runs is a
// task card in that same message, ending complete or error, and the
// answer's words follow in it.
func TestSlowModelsCommandsAreTaskCards(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	placed := make(chan struct{})
	b, _ := newTestBot(t, conn, approvals.GateConfig{}, slowThenCommands(placed))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Start(ctx, b.Handle) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-fake.Connected():
	case <-time.After(slackWait):
		t.Fatal("the connector never opened a Socket Mode connection")
	}
	root := fake.Mention("C0OPS", "U0ALICE", "", "is web up")
	var answer string
	if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, m := range s.Thread("C0OPS", root.Thread) {
			if m.Bot {
				answer = m.TS
				return true
			}
		}
		return false
	}) {
		t.Fatal("no placeholder while the model is silent")
	}
	close(placed)
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		m, _ := s.Message("C0OPS", answer)
		return !m.Streaming && m.Shown() == "Both ran."
	})
	m, _ := fake.Message("C0OPS", answer)
	if !ended {
		t.Fatalf("the placeholder's message did not become the answer:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	// Each command has its card in that stream, with its final status and
	// output: a command still running 5 s in (a loaded machine) shows Stop
	// below the stream, which goes on.
	want := map[string]string{"call-ok": "complete", "call-fail": "error"}
	for _, tk := range m.Tasks {
		if w, ok := want[tk.ID]; ok && tk.Status == w && tk.Output != "" {
			delete(want, tk.ID)
		}
	}
	if len(want) > 0 {
		t.Errorf("cards %+v, context %q; missing or wrong: %v (want each with its final status and output)", m.Tasks, m.Context(), want)
	}
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
}
