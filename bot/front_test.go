package bot

import (
	"context"
	"fmt"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
)

// A front whose platform keeps every status line in view (the terminal)
// gets no "What ran" summary after an answer; a question (opsbot ask)
// goes to the agent however it begins, even with a command's word.
func TestTerminalFront(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"seq 1 3"}`),
		text("Counted to three."),
	}}
	conn := newFakeConn(connectors.Limits{MaxText: 4000, KeepsStatus: true})
	conn.name = "web"
	h := newHarnessOn(t, conn, botOptions{model: m})
	h.deliver(connectors.Event{ID: fmt.Sprintf("ev%d", eventSeq.Add(1)), Kind: connectors.EventMessage, Platform: "web",
		Channel: "ops", Thread: "t1", User: connectors.User{ID: "alice", Name: "alice"}, Text: "help me count", Mention: true, Question: true})
	h.eventually("the answer", h.has("t1", "Counted to three."))
	h.say("alice", "t1", "help")
	h.eventually("the help", h.has("t1", "Mention me with a question"))
	h.absent("t1", "**What ran**", "the terminal keeps every status line")
	n := 0
	for _, m := range h.conn.thread("t1") {
		if m.msg.Text != QueuedNote {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d messages; want the answer to the question and the help: %s", n, h.dump())
	}
}
