package bot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// planFixture is Plans over a real store, policy and local bash, posting
// to a fake web platform; strict, when set, makes the policy deny every
// command that names it.
type planFixture struct {
	t      *testing.T
	ps     *Plans
	conn   *fakeConn
	st     *store.Store
	sess   agent.SessionInfo
	thread string
	log    string
	strict atomic.Value
}

// strictPolicy is the fleet's policy, but it denies a command that names
// the word in strict.
type strictPolicy struct {
	approvals.HostPolicy
	f *planFixture
}

func (p strictPolicy) Check(host, command string) approvals.HostDecision {
	if w, _ := p.f.strict.Load().(string); w != "" && strings.Contains(command, w) {
		return approvals.HostDecision{Action: policy.Deny, Reasons: []string{"made stricter by the test"}}
	}
	return p.HostPolicy.Check(host, command)
}

func newPlanFixture(t *testing.T) *planFixture {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	pol, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f := &planFixture{t: t, st: st, conn: newFakeConn(connectors.Limits{}), log: filepath.Join(dir, "plan.log"), thread: "T1"}
	f.conn.name = "web"
	gate := approvals.NewGate(st.Approvals(), approvals.GateConfig{Approvers: []approvals.ApproverConfig{{Web: approvals.UserList{Users: []string{"alice", "bob"}}}}}, approvals.GateOptions{})
	guard := &approvals.Guard{Policy: strictPolicy{approvals.FleetPolicy{Policy: pol, Inventory: fleet.Inventory}, f}, Exec: &executor.Fleet{Fleet: fleet}}
	f.ps = NewPlans(PlanDeps{Gate: gate, Guard: guard, Store: st, Platforms: NewPlatforms(nil, nil, f.conn), Platform: "web"})
	s, _, err := st.Sessions().SessionFor(context.Background(), store.ThreadKey{Platform: "web", Channel: "ops", Thread: f.thread})
	if err != nil {
		t.Fatal(err)
	}
	f.sess = agent.SessionInfo{ID: s.ID, Requester: "alice", Platform: "web", Channel: "ops"}
	return f
}

// click presses, as user, the button action of the newest message in the
// thread that has one, and returns the button's value.
func (f *planFixture) click(user, action string) string {
	f.t.Helper()
	msgs := f.conn.thread(f.thread)
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range msgs[i].msg.Buttons {
			if b.ActionID == action {
				f.ps.click(context.Background(), connectors.Event{Kind: connectors.EventAction, Platform: "web", Channel: "ops", Thread: f.thread,
					User: connectors.User{ID: user, Name: user}, ActionID: action, Value: b.Value, Ref: connectors.Ref{ID: msgs[i].id}})
				return b.Value
			}
		}
	}
	f.t.Fatalf("no %s button in the thread:\n%s", action, f.texts())
	return ""
}

func (f *planFixture) texts() string {
	var b strings.Builder
	for _, m := range f.conn.thread(f.thread) {
		b.WriteString(m.msg.Text + "\n")
	}
	return b.String()
}

func (f *planFixture) logText() string {
	b, _ := os.ReadFile(f.log)
	return string(b)
}

// A step the policy judges stricter just before it runs than when the
// plan was approved halts the plan there, and asks: Continue is a new
// card for the steps that did not complete, and runs them once approved.
func TestPlanHaltsOnAStricterVerdictAndContinueAsksAgain(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	p := approvals.Plan{Goal: "three lines", Steps: []approvals.PlanStep{
		{Target: "local", Command: "echo s1 >> " + f.log}, {Target: "local", Command: "echo s2 >> " + f.log}, {Target: "local", Command: "echo s3 >> " + f.log}}}
	if got := f.ps.Propose(context.Background(), f.sess, p); !strings.HasPrefix(got, "Plan proposed (3 steps)") {
		t.Fatalf("propose: %q", got)
	}
	f.strict.Store("s2")
	f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\n" {
		t.Fatalf("after a stricter verdict on step 2 the log is %q, want step 1 only", got)
	}
	if !strings.Contains(f.texts(), "Plan halted at step 2: the policy now denies it: made stricter by the test") {
		t.Errorf("the thread does not say why the plan halted:\n%s", f.texts())
	}
	f.strict.Store("")
	f.click("alice", ActionPlanContinue)
	if got := f.logText(); got != "s1\n" {
		t.Fatalf("Continue ran something before a new approval: %q", got)
	}
	f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\ns2\ns3\n" {
		t.Errorf("after Continue was approved the log is %q", got)
	}
}

// A step that fails halts the plan; Run rollback proposes, as a new card,
// the approved rollback commands of the steps that ran, last first, and
// none of a step that never ran.
func TestPlanFailureHaltsAndRollbackUndoesWhatRan(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	step := func(name, command string) approvals.PlanStep {
		return approvals.PlanStep{Target: "local", Command: command, Rollback: "echo r" + name + " >> " + f.log}
	}
	p := approvals.Plan{Goal: "four steps", Steps: []approvals.PlanStep{step("1", "echo s1 >> "+f.log), step("2", "echo s2 >> "+f.log),
		step("3", "echo s3 >> "+filepath.Join(f.log, "no-such-dir")), step("4", "echo s4 >> "+f.log)}}
	f.ps.Propose(context.Background(), f.sess, p)
	id := f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\ns2\n" {
		t.Fatalf("the log is %q, want steps 1 and 2, and nothing after the failure", got)
	}
	f.click("alice", ActionPlanRollback)
	// The halt message loses its choices once one is taken, and what the
	// model is told of a proposed plan is not posted to people.
	for _, m := range f.conn.thread(f.thread) {
		if slices.ContainsFunc(m.msg.Buttons, func(b connectors.Button) bool { return isPlanAction(b.ActionID) }) {
			t.Errorf("after Run rollback a message still offers %v: %q", m.msg.Buttons, m.msg.Text)
		}
		if strings.Contains(m.msg.Text, "Do not run these commands yourself") {
			t.Errorf("the model's words were posted: %q", m.msg.Text)
		}
	}
	f.click("bob", ActionApprove)
	if got := f.logText(); got != "s1\ns2\nr3\nr2\nr1\n" {
		t.Errorf("after the rollback the log is %q, want the rollbacks of steps 3, 2, 1", got)
	}
	if rec, err := f.st.Plans().Plan(context.Background(), id); err != nil || rec.State != "rolled_back" {
		t.Errorf("the failed plan is %q (%v), want rolled_back", rec.State, err)
	}
	assertAudited(t, f.st, id, "plan.halted", "plan.rolling_back", "plan.rolled_back")
}

// assertAudited checks that the audit trail of plan id holds actions.
func assertAudited(t *testing.T, st *store.Store, id string, actions ...string) {
	t.Helper()
	trail, err := st.Audit().AuditTrail(context.Background(), "approval:"+id)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		if !slices.ContainsFunc(trail, func(e store.AuditEntry) bool { return e.Action == a }) {
			t.Errorf("the plan's audit trail has no %s", a)
		}
	}
}

// Stop ends a halted plan: nothing more runs, and a later Continue is
// told the plan is no longer halted.
func TestPlanStopEndsAHaltedPlan(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t)
	p := approvals.Plan{Goal: "two steps", Steps: []approvals.PlanStep{
		{Target: "local", Command: "echo s1 >> " + filepath.Join(f.log, "no-such-dir")}, {Target: "local", Command: "echo s2 >> " + f.log}}}
	f.ps.Propose(context.Background(), f.sess, p)
	id := f.click("bob", ActionApprove)
	f.click("alice", ActionPlanStop)
	if rec, err := f.st.Plans().Plan(context.Background(), id); err != nil || rec.State != "stopped" {
		t.Errorf("after Stop the plan is %q (%v)", rec.State, err)
	}
	f.ps.click(context.Background(), connectors.Event{Kind: connectors.EventAction, Platform: "web", Channel: "ops", Thread: f.thread,
		User: connectors.User{ID: "bob"}, ActionID: ActionPlanContinue, Value: id})
	if !strings.Contains(f.texts(), "This plan is not halted any more; nothing changed.") || f.logText() != "" {
		t.Errorf("Continue after Stop did something:\n%s", f.texts())
	}
	assertAudited(t, f.st, id, "plan.halted", "plan.stopped")
}
