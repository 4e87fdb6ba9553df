package approvals

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// crashBeforeDecide is the store of a process killed right after a vote
// was written: every separate decision fails.
type crashBeforeDecide struct{ TestStore }

func (crashBeforeDecide) DecideApproval(context.Context, string, ApprovalState, string) (bool, Approval, error) {
	return false, Approval{}, errors.New("killed")
}

// A vote and the decision it makes are one transaction: a crash can no
// longer keep bob's vote and lose the approval, leaving the request
// pending and bob told "you have already voted" until it expired (9 of
// 200 kills in issue 12's harness).
func TestVoteAndItsDecisionAreOneTransaction(t *testing.T) {
	t.Parallel()
	for _, vote := range []string{VoteApprove, VoteDeny} {
		t.Run(vote, func(t *testing.T) {
			f := newFixture(t, GateConfig{Approvers: testApprovers})
			id := f.request("web-1", "C1", Person{Platform: "slack", ID: "U9"})
			crashing := NewGate(crashBeforeDecide{f.st}, f.cfg, GateOptions{Now: f.clk.Now})
			crashing.Vote(context.Background(), id, Person{Platform: "slack", ID: "U2"}, vote)

			f.restart()
			a, err := f.st.Approval(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]ApprovalState{VoteApprove: ApprovalApproved, VoteDeny: ApprovalDenied}[vote]
			if a.State != want || a.DecidedBy != "slack:U2" {
				t.Fatalf("after the crash the request is %s (by %q), want %s by slack:U2", a.State, a.DecidedBy, want)
			}
			if n := f.transitions(id); n != 1 {
				t.Errorf("%d audited decisions, want 1", n)
			}
		})
	}
}

// A request left pending by a crash before votes and decisions were one
// transaction is decided by its voter's next click, instead of telling
// them they voted already.
func TestRepeatedVoteCompletesADecisionACrashLeftUndone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, GateConfig{Approvers: testApprovers})
	id := f.request("web-1", "C1", Person{Platform: "slack", ID: "U9"})
	// The old two writes, cut after the first: the vote alone.
	db, err := sql.Open("sqlite3", "file:"+f.path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO votes (approval_id, voter, vote, created_at) VALUES (?, 'slack:U2', 'approve', 0)`, id); err != nil {
		t.Fatal(err)
	}
	res, err := f.gate.Vote(context.Background(), id, Person{Platform: "slack", ID: "U2"}, VoteApprove)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != VoteDecided || res.Approval.State != ApprovalApproved {
		t.Fatalf("the repeated click: %q (request %s), want it to decide the request", res.Message(), res.Approval.State)
	}
}
