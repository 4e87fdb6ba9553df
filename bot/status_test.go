package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

// An agent's command that waits for an approval is shown as waiting, not
// as running: the tool's "running …" line gives way to the wait until
// people decide (a try-out read "running `touch …`" above an unanswered
// card).
func TestCommandWaitingForApprovalIsNotShownAsRunning(t *testing.T) {
	t.Parallel()
	target := filepath.Join(t.TempDir(), "made")
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"touch `+target+`"}`),
		text("Done."),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "make the file please")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	wait := "waiting for approval to run `touch " + target + "` on local"
	h.eventually("the answer's status", h.has("t1", wait))
	answer, _, _ := h.find("t1", wait)
	if strings.Contains(answer.msg.Context+answer.msg.Text, "running `touch") {
		t.Errorf("the answer says the command runs while it waits for approval:\n%s\n%s", answer.msg.Text, answer.msg.Context)
	}
}

// Once approved, the wait gives way: the run's line, then its result,
// take its place (the web chat showed "waiting for approval …" above the
// ✓ line of the finished run).
func TestWaitGivesWayOnceApproved(t *testing.T) {
	t.Parallel()
	target := filepath.Join(t.TempDir(), "made")
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	h.eventually("the wait", h.has("t1", "waiting for approval to run"))
	card, ref, _ := h.find("t1", "Approval needed")
	h.click("bob", card, ref, ActionApprove)
	h.eventually("the run's result", h.has("t1", "✓ `touch "+target+"` on local: exit 0"))
	out, _, _ := h.find("t1", "✓ `touch "+target+"` on local: exit 0")
	if strings.Contains(out.msg.Context, "waiting for approval") {
		t.Errorf("the finished run still says it waits: %q", out.msg.Context)
	}
}

// An agent's command, once approved, shows as running while it runs, not
// as still waiting for the approval it got.
func TestApprovedAgentCommandShowsAsRunning(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	command := "cp " + fifo + " " + filepath.Join(filepath.Dir(fifo), "copy") // writes: needs an approval
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"`+command+`"}`),
		text("Done."),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "wait on the gate please")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	card, ref, _ := h.find("t1", "Approval needed")
	h.click("bob", card, ref, ActionApprove)
	running := "approved: running `" + command + "` on local…"
	h.eventually("the running line", h.has("t1", running))
	answer, _, _ := h.find("t1", running)
	if strings.Contains(answer.msg.Context, "waiting for approval") {
		t.Errorf("the running command still reads as waiting: %q", answer.msg.Context)
	}
	// The command ends when the gate opens.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	h.eventually("the answer", h.has("t1", "Done."))
}
