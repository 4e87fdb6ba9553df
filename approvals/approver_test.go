package approvals

import (
	"context"
	"path/filepath"
	"testing"
)

// A request is made by the person of the session's own platform: with the
// approver wired for another platform, a Slack user's request must still be
// recorded as slack:U1, so that U1's own Slack click is refused as
// self-approval (before, it was recorded as web:U1 and slack:U1 could
// approve it).
func TestRequesterIsOfTheSessionsPlatform(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "opsbot.db"), nil)
	defer st.Close()
	gate := NewGate(st, GateConfig{Approvers: []ApproverConfig{
		{Slack: SlackApprovers{Users: []string{"U1", "U2"}}}}}, GateOptions{})
	g := GateApprover{Gate: gate, Store: st, Platform: "web"}
	pending := make(chan Pending, 1)
	done := make(chan Outcome, 1)
	go func() {
		out, err := g.Approve(context.Background(), CommandRequest{Requester: Person{Platform: "slack", ID: "U1"}, Channel: "C1", Target: "local", Hosts: []string{"local"},
			Command: "systemctl restart nginx"}, func(p Pending) { pending <- p })
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	p := <-pending
	if p.Requester != "slack:U1" {
		t.Errorf("the request is recorded as made by %q, want slack:U1", p.Requester)
	}
	self, err := gate.Vote(context.Background(), p.ID, Person{Platform: "slack", ID: "U1"}, VoteApprove)
	if err != nil {
		t.Fatal(err)
	}
	if self.Status != VoteRefused {
		t.Errorf("U1 approving U1's own request on Slack: %v, want refused", self.Status)
	}
	if _, err := gate.Vote(context.Background(), p.ID, Person{Platform: "slack", ID: "U2"}, VoteApprove); err != nil {
		t.Fatal(err)
	}
	if out := <-done; !out.Approved {
		t.Errorf("U2's approval: %+v, want approved", out)
	}
}
