package bot

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// An approved plan's card says who approved it, and when, in every edit
// from its start to its end: done or halted (a try-out saw a finished
// card that no longer said who approved it).
func TestPlanCardKeepsWhoApprovedItToTheEnd(t *testing.T) {
	t.Parallel()
	for name, second := range map[string]string{"done": "echo s2 >> %s", "halted": "echo s2 >> %s/no-such-dir"} {
		f := newPlanFixture(t)
		p := approvals.Plan{Goal: "two lines", Steps: []approvals.PlanStep{
			{Target: "local", Command: "echo s1 >> " + f.log}, {Target: "local", Command: strings.ReplaceAll(second, "%s", f.log)}}}
		f.ps.Propose(context.Background(), f.sess, p)
		f.click("bob", ActionApprove)
		card := f.conn.thread(f.thread)[0]
		if len(card.history) < 3 {
			t.Fatalf("%s: the card was edited %d times", name, len(card.history)-1)
		}
		for i, text := range card.history[1:] {
			if !strings.Contains(connectors.PlainMentions(text), "approved by @bob at ") {
				t.Errorf("%s: edit %d of the card does not say who approved it:\n%s", name, i+1, text)
			}
		}
	}
}

// Continue and Run rollback are asked by whoever pressed them: the new
// card says so, that person's own approval runs nothing, and someone
// else's does, whoever asked for the halted plan.
func TestPlanRollbackIsRequestedByWhoPressedIt(t *testing.T) {
	t.Parallel()
	for _, action := range []string{ActionPlanRollback, ActionPlanContinue} {
		f := newPlanFixture(t)
		bad := filepath.Join(f.log, "no-such-dir")
		p := approvals.Plan{Goal: "one step", Steps: []approvals.PlanStep{
			{Target: "local", Command: "echo s1 >> " + f.log}, {Target: "local", Command: "echo s2 >> " + bad, Rollback: "echo r2 >> " + f.log}}}
		f.ps.Propose(context.Background(), f.sess, p)
		f.click("bob", ActionApprove)
		f.click("bob", action)
		msgs := f.conn.thread(f.thread)
		card := connectors.PlainMentions(msgs[len(msgs)-1].msg.Text)
		if !strings.Contains(card, "**Plan needs approval** — requested by @bob") {
			t.Fatalf("%s: the new card reads:\n%s", action, card)
		}
		f.click("bob", ActionApprove)
		if !strings.Contains(f.texts(), "Your vote was not counted: you asked for this plan; someone else has to approve it") || f.logText() != "s1\n" {
			t.Errorf("%s: the presser's own approval was not refused as the requester's:\n%s", action, f.texts())
		}
		f.click("alice", ActionApprove)
		if action == ActionPlanRollback && f.logText() != "s1\nr2\n" {
			t.Errorf("alice's approval of bob's rollback left the log %q", f.logText())
		}
	}
}

// A pending plan is listed by `approvals` as its goal, its number of
// steps and its targets, never as its canonical text.
func TestApprovalsListsAPlanByItsGoal(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	p := approvals.Plan{Goal: "free the disk", Steps: []approvals.PlanStep{
		{Target: "local", Command: "echo s1 >> " + f.log}, {Target: "local", Command: "echo s2 >> " + f.log}}}
	f.ps.Propose(context.Background(), f.sess, p)
	c := &commands{pending: f.st.Approvals(), whoMay: func(approvals.Approval) string { return "@bob" }}
	text, err := c.approvalsText(context.Background(), connectors.Event{Platform: "web", Channel: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "`plan: free the disk (2 steps on local)` on `local`") || strings.Contains(text, "opsbot plan v1") {
		t.Errorf("`approvals` lists:\n%s", text)
	}
}
