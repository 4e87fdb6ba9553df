package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

func newApproval(clock *fixedClock) approvals.Approval {
	return approvals.Approval{Hash: "h1", Host: "web-1", Command: "systemctl restart nginx", Requester: "U1",
		Reasons: []string{"systemctl restart changes state"}, Quorum: 2, ExpiresAt: clock.Now().Add(15 * time.Minute)}
}

func TestApprovalVotesAndConditionalDecision(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	a, err := s.Approvals().CreateApproval(ctx, newApproval(clock))
	if err != nil || a.ID == "" || a.State != approvals.ApprovalPending {
		t.Fatalf("CreateApproval = %+v, %v", a, err)
	}
	got, err := s.Approvals().Approval(ctx, a.ID)
	if err != nil || got.Command != a.Command || got.Quorum != 2 || len(got.Reasons) != 1 || !got.ExpiresAt.Equal(a.ExpiresAt) {
		t.Fatalf("Approval = %+v, %v; want %+v", got, err, a)
	}
	tally, err := s.Approvals().RecordVote(ctx, a.ID, "U2", "approve")
	if err != nil || !tally.Recorded || tally.Approvals != 1 {
		t.Fatalf("first vote = %+v, %v", tally, err)
	}
	if tally, _ := s.Approvals().RecordVote(ctx, a.ID, "U2", "approve"); tally.Recorded || tally.Approvals != 1 {
		t.Errorf("double vote counted: %+v", tally)
	}
	if tally, _ := s.Approvals().RecordVote(ctx, a.ID, "U2", "deny"); tally.Recorded {
		t.Error("a voter changed their vote")
	}
	if _, err := s.Approvals().RecordVote(ctx, a.ID, "U3", "maybe"); err == nil {
		t.Error("a vote other than approve/deny was accepted")
	}
	if pending, _ := s.Approvals().PendingApprovals(ctx); len(pending) != 1 {
		t.Errorf("PendingApprovals = %d; want 1", len(pending))
	}
	won, decided, err := s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "U3")
	if err != nil || !won || decided.State != approvals.ApprovalApproved || decided.DecidedBy != "U3" {
		t.Fatalf("DecideApproval = %v, %+v, %v", won, decided, err)
	}
	won, late, _ := s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalDenied, "U4")
	if won || late.State != approvals.ApprovalApproved || late.DecidedBy != "U3" {
		t.Errorf("late decision = %v, %+v; want lost, still approved by U3", won, late)
	}
	if tally, _ := s.Approvals().RecordVote(ctx, a.ID, "U5", "approve"); tally.Recorded {
		t.Error("a vote on a decided request was counted")
	}
	votes, _ := s.Approvals().Votes(ctx, a.ID)
	if len(votes) != 1 || votes[0].Voter != "U2" {
		t.Errorf("Votes = %+v", votes)
	}
	trail, _ := s.Audit().AuditTrail(ctx, "approval:"+a.ID)
	var actions []string
	for _, e := range trail {
		actions = append(actions, e.Action)
	}
	if len(actions) != 3 || actions[0] != "approval.request" || actions[1] != "approval.vote" || actions[2] != "approval.approved" {
		t.Errorf("audit = %v; want request, vote, approved", actions)
	}
	if _, err := s.Approvals().Approval(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing approval: %v", err)
	}
}

func TestApprovalExpiredRefusesVotesAndApproval(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	a, _ := s.Approvals().CreateApproval(ctx, newApproval(clock))
	clock.Add(15 * time.Minute)
	if tally, _ := s.Approvals().RecordVote(ctx, a.ID, "U2", "approve"); tally.Recorded {
		t.Error("a vote after expiry was counted")
	}
	if won, _, _ := s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "U2"); won {
		t.Error("an expired request was approved")
	}
	if won, got, _ := s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalExpired, "opsbot"); !won || got.State != approvals.ApprovalExpired {
		t.Errorf("expiry did not decide: %v %+v", won, got)
	}
}

func TestFiftyConcurrentDecisionsWinOnce(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	a, _ := s.Approvals().CreateApproval(ctx, newApproval(clock))
	var wg sync.WaitGroup
	wins := make(chan string, 50)
	for i := range 50 {
		wg.Go(func() {
			voter := string(rune('A' + i%26))
			if won, _, err := s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, voter); err != nil {
				t.Error(err)
			} else if won {
				wins <- voter
			}
		})
	}
	wg.Wait()
	close(wins)
	if len(wins) != 1 {
		t.Fatalf("%d decisions won; want exactly 1", len(wins))
	}
	n := 0
	trail, _ := s.Audit().AuditTrail(ctx, "approval:"+a.ID)
	for _, e := range trail {
		if e.Action == "approval.approved" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d approved audit rows; want 1", n)
	}
}

func TestApprovalIsUsedOnceAndFoundAgainByHash(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	if _, ok, err := s.Approvals().ReusableApproval(ctx, 0, "h1"); ok || err != nil {
		t.Fatalf("found a request before any: %v %v", ok, err)
	}
	a, _ := s.Approvals().CreateApproval(ctx, newApproval(clock))
	if got, ok, _ := s.Approvals().ReusableApproval(ctx, 0, "h1"); !ok || got.ID != a.ID {
		t.Fatal("a pending request was not found by its hash")
	}
	if won, _ := s.Approvals().ConsumeApproval(ctx, a.ID, "opsbot"); won {
		t.Error("a pending request was consumed")
	}
	s.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "U2")
	if got, ok, _ := s.Approvals().ReusableApproval(ctx, 0, "h1"); !ok || got.State != approvals.ApprovalApproved {
		t.Fatal("an approved, unused request was not found")
	}
	if won, _ := s.Approvals().ConsumeApproval(ctx, a.ID, "opsbot"); !won {
		t.Fatal("ConsumeApproval of an approved request lost")
	}
	if won, _ := s.Approvals().ConsumeApproval(ctx, a.ID, "opsbot"); won {
		t.Error("an approval was used twice")
	}
	if _, ok, _ := s.Approvals().ReusableApproval(ctx, 0, "h1"); ok {
		t.Error("a used approval was offered again")
	}
	if err := s.Approvals().SetApprovalCard(ctx, a.ID, "C1", "m7"); err != nil {
		t.Fatal(err)
	}
	if ch, msg, _ := s.Approvals().ApprovalCard(ctx, a.ID); ch != "C1" || msg != "m7" {
		t.Errorf("ApprovalCard = %q %q", ch, msg)
	}
	// An expired pending request is not reusable; nor is an approved one
	// nobody used before its expiry; nor one of another session.
	b, _ := s.Approvals().CreateApproval(ctx, newApproval(clock))
	c, _ := s.Approvals().CreateApproval(ctx, newApproval(clock))
	s.Approvals().DecideApproval(ctx, c.ID, approvals.ApprovalApproved, "U2")
	if _, ok, _ := s.Approvals().ReusableApproval(ctx, 42, "h1"); ok {
		t.Error("another session's approval was offered")
	}
	clock.Add(time.Hour)
	if got, ok, _ := s.Approvals().ReusableApproval(ctx, 0, "h1"); ok {
		t.Errorf("an expired request was offered: %+v (b=%s)", got, b.ID)
	}
}
