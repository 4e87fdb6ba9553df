package bot

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// heard keeps the follow-up turns a plan hands the model.
type heard struct {
	mu    sync.Mutex
	notes []string
}

func (h *heard) handle(_ context.Context, ev connectors.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, ev.Text)
	return nil
}

func (h *heard) all() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.notes, "\n")
}

// verifyPlan is a two-step plan whose first step has verify.
func (f *planFixture) verifyPlan(verify string) approvals.Plan {
	return approvals.Plan{Goal: "write and check", Steps: []approvals.PlanStep{
		{Target: "local", Command: "echo s1 >> " + f.log, Verify: verify, Rollback: "echo r1 >> " + f.log},
		{Target: "local", Command: "echo s2 >> " + f.log}}}
}

// A step's verify is on the card under its step, runs after the step
// succeeded and before the next step, is audited as part of the step,
// shows on the progress card, and the model reads its result.
func TestPlanStepVerifyIsShownRunAndReported(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	h := &heard{}
	f.ps.handle = h.handle
	verify := "grep -c s1 " + f.log + " && echo v1 >> " + f.log
	f.ps.Propose(context.Background(), f.sess, f.verifyPlan(verify))
	card := f.conn.thread(f.thread)[0].msg.Text
	step1, step2 := strings.Index(card, "**Step 1**"), strings.Index(card, "**Step 2**")
	if at := strings.Index(card, verify); at < step1 || at > step2 || !strings.Contains(card[step1:step2], "verify — ") {
		t.Errorf("the card does not show the verify under step 1:\n%s", card)
	}
	id := f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\nv1\ns2\n" {
		t.Fatalf("the log is %q, want step 1, its verify, then step 2", got)
	}
	progress := f.conn.thread(f.thread)[0].msg.Text
	if !strings.Contains(progress, "verify ✅ `"+verify+"` — exit 0: 1") {
		t.Errorf("the progress card does not show the verify's result:\n%s", progress)
	}
	if note := h.all(); !strings.Contains(note, "verify `"+verify+"`: complete (exit 0): 1") {
		t.Errorf("the model was told:\n%s", note)
	}
	assertAudited(t, f.st, id, "plan.step_verified", "plan.done")
}

// A verify that exits non-zero fails its step: the plan halts there with
// Continue, Run rollback and Stop, the next step does not run, and the
// model is told why.
func TestPlanStepVerifyFailingHaltsThePlan(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	h := &heard{}
	f.ps.handle = h.handle
	f.ps.Propose(context.Background(), f.sess, f.verifyPlan("grep -q nothing-like-this "+f.log))
	id := f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\n" {
		t.Fatalf("the log is %q, want step 1 only: its verify failed", got)
	}
	texts := f.texts()
	if !strings.Contains(texts, "Plan halted at step 1: its verify `grep -q nothing-like-this "+f.log+"` failed on local: exit 1") {
		t.Errorf("the thread does not say the verify failed:\n%s", texts)
	}
	if !strings.Contains(h.all(), "halted at step 1: its verify") || !strings.Contains(h.all(), ": error (exit 1)") {
		t.Errorf("the model was told:\n%s", h.all())
	}
	steps, err := f.st.Plans().PlanSteps(context.Background(), id)
	if err != nil || len(steps) != 1 || steps[0].State != string(approvals.StepError) {
		t.Errorf("the recorded steps are %+v (%v), want step 1 in error", steps, err)
	}
	f.click("alice", ActionPlanRollback)
	f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\nr1\n" {
		t.Errorf("after rolling back the step whose verify failed the log is %q", got)
	}
}

// The policy judges a verify just before it runs, like any step: one it
// denies now halts the plan, and one it denies at once refuses the plan
// before any card.
func TestPlanStepVerifyIsCheckedByThePolicy(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	f.ps.Propose(context.Background(), f.sess, f.verifyPlan("echo vcheck >> "+f.log))
	f.strict.Store("vcheck")
	f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\n" {
		t.Fatalf("the log is %q, want step 1 only: its verify is denied now", got)
	}
	if !strings.Contains(f.texts(), "Plan halted at step 1: the policy now denies its verify: made stricter by the test") {
		t.Errorf("the thread does not say the verify was denied:\n%s", f.texts())
	}
	g := newPlanFixture(t)
	got := g.ps.Propose(context.Background(), g.sess, g.verifyPlan("mkfs.ext4 "+filepath.Join(g.log, "dev")))
	if !strings.Contains(got, "Plan refused, no card posted: step 1's verify (`mkfs.ext4") || len(g.conn.thread(g.thread)) != 0 {
		t.Errorf("a plan whose verify the policy denies: %q, %d messages", got, len(g.conn.thread(g.thread)))
	}
}
