package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// askAndRestart posts a chat `run` that needs approval (it appends a line
// to a file, so the test can count its runs), waits for its card, and
// restarts the bot while the card is pending. It returns the file and the
// card.
func askAndRestart(h *harness, opt botOptions) (string, connectors.Ref) {
	h.t.Helper()
	target := filepath.Join(h.dir, "runs.txt")
	h.say("alice", "t1", "run local echo ran >> "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	h.restart(opt)
	h.eventually("the restart note", h.has("t1", "interrupted: opsbot is restarting"))
	return target, ref
}

// settled waits until the thread has handled everything queued so far: the
// thread works in order, so once the answer to a later `help` is there,
// whatever came before it is done.
func (h *harness) settled(thread string) {
	h.t.Helper()
	before := len(h.conn.thread(thread))
	h.say("alice", thread, "help")
	h.eventually("the thread to settle", func() bool {
		msgs := h.conn.thread(thread)
		for _, m := range msgs[min(before, len(msgs)):] {
			if strings.Contains(m.msg.Text, "`help` — this text") {
				return true
			}
		}
		return false
	})
}

// runs is how many times the command of askAndRestart ran.
func runs(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "ran\n")
}

// noEmptyMessages fails when the thread shows a message with nothing in it.
func (h *harness) noEmptyMessages(thread string) {
	h.t.Helper()
	for _, m := range h.conn.thread(thread) {
		if strings.TrimSpace(m.msg.Text) == "" && strings.TrimSpace(m.msg.Context) == "" {
			h.t.Errorf("an empty message in the thread: %s", h.dump())
		}
	}
}

// The product's central promise: an approval decided after a restart runs
// the chat `run` it approves, exactly once, and the thread says so — with
// the agent off and on.
func TestApprovalAfterRestartRunsTheChatCommandOnce(t *testing.T) {
	t.Parallel()
	for _, withAgent := range []bool{false, true} {
		name := "agent off"
		if withAgent {
			name = "agent on"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var m agent.Provider
			if withAgent {
				m = &model{} // a chat `run` never calls it
			}
			h := newHarness(t, approvals.GateConfig{}, m)
			target, ref := askAndRestart(h, botOptions{model: m})
			if n := runs(t, target); n != 0 {
				t.Fatalf("ran %d times before anyone approved", n)
			}
			card := h.msg(ref)
			if said := h.click("bob", card, ref, ActionApprove); !strings.Contains(said, "You approved it") {
				t.Errorf("bob was told %q", said)
			}
			h.eventually("the command's result", h.has("t1", "exit 0"))
			h.eventually("the card to show the decision", h.has("t1", "Approved by @bob"))
			// Nothing runs it again: not a sweep, not a late click, not
			// another restart.
			h.bot.followUps.sweep(context.Background())
			if said := h.click("alice", card, ref, ActionApprove); !strings.Contains(said, "already approved") {
				t.Errorf("a late click was told %q", said)
			}
			h.restart(botOptions{model: m})
			h.settled("t1")
			if n := runs(t, target); n != 1 {
				t.Errorf("the approved command ran %d times; want once. Thread: %s", n, h.dump())
			}
			if out, _, _ := h.find("t1", "exit 0"); !strings.Contains(out.msg.Context, "Approved by @bob.") {
				t.Errorf("the run's message does not say who approved it: %s", h.dump())
			}
			h.noEmptyMessages("t1")
		})
	}
}

// A request denied after a restart does not run, and the thread says why.
func TestDenialAfterRestartSaysWhyNotRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target, ref := askAndRestart(h, botOptions{})
	h.click("bob", h.msg(ref), ref, ActionDeny)
	h.eventually("the refusal", h.has("t1", "Not run: `echo ran >> "+target+"` on local — denied by @bob."))
	h.settled("t1")
	if n := runs(t, target); n != 0 {
		t.Errorf("a denied command ran %d times", n)
	}
	h.noEmptyMessages("t1")
}

// A request that expires while no turn waits for it (the bot restarted)
// is reported, with how long people had, and its card says so.
func TestExpiryAfterRestartSaysWhyNotRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{Expiry: time.Hour}, nil)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	target, ref := askAndRestart(h, botOptions{gate: approvals.GateConfig{Expiry: time.Hour}, now: later})
	// The new bot expires overdue requests as it starts.
	h.eventually("the expiry note", h.has("t1", "Not run: `echo ran >> "+target+"` on local — expired: nobody decided within 1 hour."))
	h.eventually("the card to show the expiry", h.has("t1", "Expired, not run"))
	if card := h.msg(ref); len(card.msg.Buttons) != 0 {
		t.Errorf("an expired card still has buttons: %s", h.dump())
	}
	h.bot.followUps.sweep(context.Background())
	h.settled("t1")
	if n := strings.Count(h.dump(), "Not run:"); n != 1 {
		t.Errorf("the expiry was reported %d times; want once: %s", n, h.dump())
	}
	if n := runs(t, target); n != 0 {
		t.Errorf("an expired command ran %d times", n)
	}
}

// An agent's command approved after a restart: the turn resumes, runs it
// once, and the model answers; no empty message appears.
func TestAgentApprovalAfterRestartResumesTheTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "runs.txt")
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"echo ran >> `+target+`"}`),
		text("Appended the line."),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "append a line please")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	h.restart(botOptions{model: m})
	h.click("bob", h.msg(ref), ref, ActionApprove)
	h.eventually("the model's answer after the run", h.has("t1", "Appended the line."))
	h.settled("t1")
	if n := runs(t, target); n != 1 {
		t.Errorf("the approved command ran %d times; want once", n)
	}
	h.noEmptyMessages("t1")
}

// An agent's command denied after a restart is reported in the thread.
func TestAgentDenialAfterRestartSaysWhyNotRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "runs.txt")
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"echo ran >> `+target+`"}`),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "append a line please")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	h.restart(botOptions{model: m})
	h.click("bob", h.msg(ref), ref, ActionDeny)
	h.eventually("the refusal", h.has("t1", "Not run: `echo ran >> "+target+"` on local — denied by @bob."))
	if n := runs(t, target); n != 0 {
		t.Errorf("a denied command ran %d times", n)
	}
	h.noEmptyMessages("t1")
	// The model reads why with the next message.
	h.say("alice", "t1", "and now?")
	h.eventually("the next answer", h.has("t1", "(no more script)"))
	last := m.requests()[len(m.requests())-1]
	if !strings.Contains(fmt.Sprint(last.Messages), "not run: the approval request was denied by @bob") {
		t.Errorf("the model was not told of the denial: %v", last.Messages)
	}
}

// The follow-up of a request is on disk before its card is posted.
func TestFollowUpIsRecordedBeforeTheCard(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run --timeout 90s local touch /nonexistent/x")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	pending, err := h.st.Approvals().PendingApprovals(context.Background())
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending approvals: %v %v", pending, err)
	}
	f, ok, err := h.st.Approvals().FollowUpFor(context.Background(), pending[0].ID)
	if err != nil || !ok {
		t.Fatalf("no follow-up recorded: %v", err)
	}
	want := store.FollowUp{Kind: store.FollowUpRun, Target: "local", Hosts: []string{"local"}, Command: "touch /nonexistent/x", Timeout: 90 * time.Second}
	if f.Kind != want.Kind || f.Target != want.Target || strings.Join(f.Hosts, ",") != "local" || f.Command != want.Command || f.Timeout != want.Timeout || f.Background {
		t.Errorf("follow-up = %+v", f)
	}
}

// toolCall is a model step that asks for one tool.
func toolCall(name, input string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
	return func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
		if !yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{Type: agent.BlockToolUse, ID: "call-" + name, Name: name, Input: []byte(input)}}) {
			return
		}
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopToolUse})
	}
}

// An approval claimed whose follow-up a crash left open did not run (the
// claim marks the follow-up done before running): the thread is told.
func TestClaimCutByACrashIsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target, _ := askAndRestart(h, botOptions{})
	pending, _ := h.st.Approvals().PendingApprovals(context.Background())
	if len(pending) != 1 {
		t.Fatalf("%d pending", len(pending))
	}
	id := pending[0].ID
	// The old process decided and claimed it, then died.
	if _, _, err := h.st.Approvals().DecideApproval(context.Background(), id, approvals.ApprovalApproved, "web:bob"); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.st.Approvals().ConsumeApproval(context.Background(), id, "web:alice"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	h.restart(botOptions{})
	h.eventually("the report", h.has("t1", "approved by @bob, but opsbot stopped before running it: not run."))
	_, ref, _ := h.find("t1", "stopped before running it")
	if m := h.msg(ref); len(m.msg.Buttons) != 1 || m.msg.Buttons[0].ActionID != ActionAskAgain {
		t.Errorf("the report has buttons %+v, want Ask again", m.msg.Buttons)
	}
	h.settled("t1")
	if n := runs(t, target); n != 0 {
		t.Errorf("ran %d times", n)
	}
}

// Every decided card is edited, even one whose decision nothing acts on
// any more (its follow-up done: a crash cut the card's edit after the
// vote, or it expired while no turn waited): 225 of 923 decided cards kept
// their Approve and Deny buttons after issue 12's kill loop.
func TestDecidedCardIsEditedWhateverDecidedIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local touch "+filepath.Join(h.dir, "x"))
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	pending, _ := h.st.Approvals().PendingApprovals(context.Background())
	if len(pending) != 1 {
		t.Fatalf("%d pending", len(pending))
	}
	// Decided and acted on by a process that died before the card's edit.
	h.restart(botOptions{held: true})
	if _, _, err := h.st.Approvals().DecideApproval(context.Background(), pending[0].ID, approvals.ApprovalDenied, "web:bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Approvals().FinishFollowUp(context.Background(), pending[0].ID); err != nil {
		t.Fatal(err)
	}
	h.restart(botOptions{})
	h.eventually("the card without its buttons", func() bool { return len(h.msg(ref).msg.Buttons) == 0 })
	if m := h.msg(ref); !strings.Contains(m.msg.Context, "denied by") {
		t.Errorf("the card's context says %q, want the decision", m.msg.Context)
	}
}

// A model's approval decided just before a crash, whose follow-up the
// restart has not acted on yet, is not superseded by the next message in
// its thread: the tool call resumes and the command runs, once, before the
// new message is answered (issue 12: 2 of 2 such approvals were dropped as
// "superseded").
func TestDecidedAgentApprovalIsNotSupersededByTheNextMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "runs.txt")
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"echo ran >> `+target+`"}`),
		text("Appended the line."),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "append a line please")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	pending, _ := h.st.Approvals().PendingApprovals(context.Background())
	if len(pending) != 1 {
		t.Fatalf("%d pending", len(pending))
	}
	// bob's vote decided it; the process died before acting on it.
	h.restart(botOptions{model: m, held: true})
	if _, err := h.st.Approvals().RecordVote(context.Background(), pending[0].ID, "web:bob", "approve"); err != nil {
		t.Fatal(err)
	}
	// The next start: alice's next message reaches the thread before the
	// start-up sweep of decided approvals.
	h.restart(botOptions{model: m, held: true})
	h.bot.threads.enqueue(threadID{"web", "ops", "t1"}, queued{ev: connectors.Event{Kind: connectors.EventMessage, Platform: "web", Channel: "ops",
		Thread: "t1", User: connectors.User{ID: "alice", Name: "alice"}, Text: "and now?", Mention: true}})
	h.eventually("the model's answer after the run", h.has("t1", "Appended the line."))
	if n := runs(t, target); n != 1 {
		t.Errorf("the approved command ran %d times; want once: %s", n, h.dump())
	}
}
