package store

import (
	"context"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// A follow-up survives with its run spec, is listed once its approval is
// decided, and is finished exactly once.
func TestFollowUpLifecycle(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	sess, _, err := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	a := newApproval(clock)
	a.SessionID = sess.ID
	a, err = s.Approvals().CreateApproval(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	f := FollowUp{ApprovalID: a.ID, SessionID: sess.ID, Kind: FollowUpRun, Target: "group:web", Hosts: []string{"web-1", "web-2"},
		Command: a.Command, Cwd: "/srv", Timeout: 5 * time.Minute, Background: true, Requester: "web:alice"}
	if err := s.Approvals().RecordFollowUp(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.Approvals().RecordFollowUp(ctx, FollowUp{ApprovalID: a.ID, SessionID: sess.ID, Kind: FollowUpAgent}); err != nil {
		t.Fatalf("a second record: %v", err)
	}
	got, ok, err := s.Approvals().FollowUpFor(ctx, a.ID)
	if err != nil || !ok || got.Kind != FollowUpRun || got.Target != "group:web" || len(got.Hosts) != 2 || got.Cwd != "/srv" ||
		got.Timeout != 5*time.Minute || !got.Background || got.State != approvals.ApprovalPending || got.Consumed || !got.DoneAt.IsZero() {
		t.Fatalf("FollowUpFor = %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := s.Approvals().FollowUpFor(ctx, "nope"); ok || err != nil {
		t.Errorf("FollowUpFor(unknown) = %v, %v", ok, err)
	}
	if open, _ := s.Approvals().DecidedFollowUps(ctx); len(open) != 0 {
		t.Errorf("a pending request's follow-up is listed as decided: %+v", open)
	}
	if _, _, err := s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "web:bob"); err != nil {
		t.Fatal(err)
	}
	if open, _ := s.Approvals().DecidedFollowUps(ctx); len(open) != 1 || open[0].State != approvals.ApprovalApproved {
		t.Fatalf("DecidedFollowUps = %+v", open)
	}
	if won, err := s.Approvals().FinishFollowUp(ctx, a.ID); !won || err != nil {
		t.Fatalf("first finish = %v, %v", won, err)
	}
	if won, _ := s.Approvals().FinishFollowUp(ctx, a.ID); won {
		t.Error("a follow-up was finished twice")
	}
	if open, _ := s.Approvals().DecidedFollowUps(ctx); len(open) != 0 {
		t.Errorf("a done follow-up is still listed: %+v", open)
	}
}
