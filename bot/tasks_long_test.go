package bot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// held is a command that runs until release is called: it reads a named
// pipe the test writes to.
func held(t *testing.T) (command string, release func()) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return "cat " + fifo, func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString("done\n")
		f.Close()
	}
}

// answerStream is the answer's stream among the thread's bot messages:
// the one with task cards.
func answerStream(s *slackfake.Server, channel, thread string) (slackfake.Message, bool) {
	for _, m := range s.Thread(channel, thread) {
		if m.Bot && len(m.Tasks) > 0 {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// stopShown is the bot message of the thread that shows Stop, if any.
func stopShown(s *slackfake.Server, channel, thread string) (slackfake.Message, bool) {
	for _, m := range s.Thread(channel, thread) {
		if m.Bot && slices.Contains(m.Buttons(), ActionStop) {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// checkCards fails t unless every command of want has its card in the
// thread with its final status, none ended unfinished, and no stream
// stopped with a card open.
func checkCards(t *testing.T, fake *slackfake.Server, thread string, want map[string]string) {
	t.Helper()
	for _, m := range fake.Thread("C0OPS", thread) {
		for _, tk := range m.Tasks {
			if st, ok := want[tk.ID]; ok && tk.Status != st {
				t.Errorf("card %s in message %s ends %q (%s); want %q", tk.ID, m.TS, tk.Status, tk.Details, st)
			}
			if tk.Details == "not finished when this message stopped" {
				t.Errorf("card %s in message %s ended unfinished", tk.ID, m.TS)
			}
		}
	}
	cards, _ := cardsOf(fake, "C0OPS", thread)
	for id := range want {
		if _, ok := cards[id]; !ok {
			t.Errorf("command %s has no card; thread:\n%s", id, fake.ThreadText("C0OPS", thread))
		}
	}
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
}

// A command still running 5 s into an answer on Slack: Stop shows below
// the answer's stream, in a message of its own, while the stream goes on
// holding the command's card; once the command ends, its card and those
// of the answer's later commands end with their true status in that same
// stream, and the Stop message loses its button.
func TestSlackLongCommandKeepsItsCardAndShowsStop(t *testing.T) {
	t.Parallel()
	wait, release := held(t)
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-wait", "run_command", `{"target":"local","command":"`+wait+`"}`),
		callTool("call-ok", "run_command", `{"target":"local","command":"echo up"}`),
		callTool("call-fail", "run_command", `{"target":"local","command":"exit 3"}`),
		text("All three ran."),
	}}
	fake := slackTestBot(t, botOptions{model: m})
	root := fake.Mention("C0OPS", "U0ALICE", "", "check web")
	shown := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		stream, ok := answerStream(s, "C0OPS", root.Thread)
		_, stop := stopShown(s, "C0OPS", root.Thread)
		return ok && stop && stream.Streaming
	})
	if !shown {
		release()
		t.Fatalf("no Stop below a streaming answer while its command runs:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	stream, _ := answerStream(fake, "C0OPS", root.Thread)
	if i := slices.IndexFunc(stream.Tasks, func(tk slackfake.Task) bool { return tk.ID == "call-wait" }); i < 0 || stream.Tasks[i].Status != "in_progress" {
		t.Errorf("the running command's card %+v; want call-wait in progress", stream.Tasks)
	}
	release()
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		m, _ := s.Message("C0OPS", stream.TS)
		_, stop := stopShown(s, "C0OPS", root.Thread)
		return !m.Streaming && m.Shown() == "All three ran." && !stop
	})
	if !ended {
		t.Fatalf("the answer did not end in its stream, Stop gone:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	checkCards(t, fake, root.Thread, map[string]string{"call-wait": "complete", "call-ok": "complete", "call-fail": "error"})
	if m, _ := fake.Message("C0OPS", stream.TS); len(m.Tasks) != 3 {
		t.Errorf("the answer's stream has cards %+v; want all three commands' cards in it", m.Tasks)
	}
}

// An answer on Slack that opens with a wait for approval: the command's
// card shows in the answer's stream, pending while people decide, then
// in progress, then complete; the wait's line and Stop show below the
// stream meanwhile.
func TestSlackApprovalFirstCommandIsACard(t *testing.T) {
	t.Parallel()
	target := filepath.Join(t.TempDir(), "made-by-approval")
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-touch", "run_command", `{"target":"local","command":"touch `+target+`"}`),
		callTool("call-ok", "run_command", `{"target":"local","command":"echo up"}`),
		text("Made it."),
	}}
	gate := approvals.GateConfig{Approvers: []approvals.ApproverConfig{{Slack: approvals.SlackApprovers{Users: []string{"U0BOB"}}}}}
	fake := slackTestBot(t, botOptions{model: m, gate: gate})
	root := fake.Mention("C0OPS", "U0ALICE", "", "make the file")
	var card string
	pending := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		stream, ok := answerStream(s, "C0OPS", root.Thread)
		if !ok || !stream.Streaming || stream.Tasks[0].Status != "pending" {
			return false
		}
		for _, msg := range s.Thread("C0OPS", root.Thread) {
			if msg.Bot && slices.Contains(msg.Buttons(), ActionApprove) {
				card = msg.TS
			}
		}
		_, stop := stopShown(s, "C0OPS", root.Thread)
		return card != "" && stop
	})
	if !pending {
		t.Fatalf("no pending card in a stream, approval card and Stop:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	if fake.Click("C0OPS", card, "U0BOB", ActionApprove) == "" {
		t.Fatal("the approval card has no Approve button")
	}
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		stream, _ := answerStream(s, "C0OPS", root.Thread)
		_, stop := stopShown(s, "C0OPS", root.Thread)
		return !stream.Streaming && stream.Shown() == "Made it." && !stop
	})
	if !ended {
		t.Fatalf("the answer did not end in its stream, Stop gone:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	checkCards(t, fake, root.Thread, map[string]string{"call-touch": "complete", "call-ok": "complete"})
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
}
