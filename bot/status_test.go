package bot

import (
	"context"
	"path/filepath"
	"strings"
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
