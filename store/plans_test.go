package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A step is recorded as started once: a second start (a replayed click, a
// restart) is refused, so no step runs twice; a restart's cut marks the
// step that started and did not end, halts the plan once, and leaves the
// finished steps as they were.
func TestPlanStepsStartOnceAndACutSaysWhatRan(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	p := s.Plans()
	if err := p.CreatePlan(ctx, PlanRecord{ApprovalID: "a1", Platform: "web", Channel: "ops", Thread: "T", Requester: "web:alice", Kind: "plan"}, "h1"); err != nil {
		t.Fatal(err)
	}
	if won, err := p.StartPlan(ctx, "a1", "web:bob"); err != nil || !won {
		t.Fatalf("start: %v %v", won, err)
	}
	if won, _ := p.StartPlan(ctx, "a1", "web:carol"); won {
		t.Error("a plan started twice")
	}
	if won, err := p.StartStep(ctx, "a1", 0, "echo 1"); err != nil || !won {
		t.Fatalf("step 1: %v %v", won, err)
	}
	if err := p.FinishStep(ctx, "a1", 0, "complete", 0, "1", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	p.StartStep(ctx, "a1", 1, "sleep 9")
	if won, _ := p.StartStep(ctx, "a1", 1, "sleep 9"); won {
		t.Error("a step started twice")
	}
	if running, err := p.RunningPlans(ctx); err != nil || len(running) != 1 {
		t.Fatalf("running plans: %v %v", running, err)
	}
	if won, err := p.CutPlan(ctx, "a1"); err != nil || !won {
		t.Fatalf("cut: %v %v", won, err)
	}
	if won, _ := p.CutPlan(ctx, "a1"); won {
		t.Error("a plan cut twice")
	}
	steps, err := p.PlanSteps(ctx, "a1")
	if err != nil || len(steps) != 2 || steps[0].State != "complete" || steps[1].State != "cut" {
		t.Errorf("steps after the cut: %+v %v", steps, err)
	}
	if rec, _ := p.Plan(ctx, "a1"); rec.State != "halted" {
		t.Errorf("a cut plan is %q, want halted", rec.State)
	}
	trail, _ := s.Audit().AuditTrail(ctx, "approval:a1")
	var actions []string
	for _, e := range trail {
		actions = append(actions, e.Action)
	}
	want := []string{"plan.proposed", "plan.approved", "plan.step_started", "plan.step_finished", "plan.step_started", "plan.halted"}
	if !slices.Equal(actions, want) {
		t.Errorf("audit %q, want %q", actions, want)
	}
}
