package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/store"
)

// A waiting turn that claims its approval leaves the follow-up open until
// the command has started, and the start closes it in the same transaction
// that records the running command. Before, the follow-up was closed first:
// a kill between the claim and the start left an approved command that
// never ran, and nothing told the thread (issue 12: 6 of 200 kills).
func TestClaimedApprovalStaysOpenUntilItsCommandStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, _, err := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	gate := approvals.NewGate(st.Approvals(), approvals.GateConfig{Approvers: []approvals.ApproverConfig{{Web: approvals.UserList{Users: []string{"bob"}}}}},
		approvals.GateOptions{})
	g := approvals.GateApprover{Gate: gate, Store: st.Approvals(), Platform: "web"}
	const command = "systemctl restart nginx"

	pending := make(chan string, 1)
	done := make(chan approvals.Outcome, 1)
	go func() {
		out, err := g.Approve(ctx, approvals.CommandRequest{Requester: approvals.Person{Platform: "web", ID: "alice"}, Channel: "ops",
			SessionID: sess.ID, Target: "local", Hosts: []string{"local"}, Command: command}, func(p approvals.Pending) {
			if err := st.Approvals().RecordFollowUp(ctx, store.FollowUp{ApprovalID: p.ID, SessionID: sess.ID, Kind: store.FollowUpAgent, Command: command}); err != nil {
				t.Error(err)
			}
			pending <- p.ID
		})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	id := <-pending
	if _, err := gate.Vote(ctx, id, approvals.Person{Platform: "web", ID: "bob"}, approvals.VoteApprove); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if !out.Approved || out.Approval != id {
		t.Fatalf("bob's approval: %+v; want it approved and claimed as %s", out, id)
	}
	f, _, _ := st.Approvals().FollowUpFor(ctx, id)
	if !f.DoneAt.IsZero() || !f.Consumed {
		t.Fatalf("claimed and not started: follow-up done at %v, consumed %v; want it open (a crash now must be told)", f.DoneAt, f.Consumed)
	}

	ledger := executor.NewProcessLedger(executorStore{st: st}, slog.Default())
	end, err := ledger.Started(ctx, hosts.Process{Host: "local", PID: 1, Command: command, Approval: out.Approval})
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	if f, _, _ = st.Approvals().FollowUpFor(ctx, id); f.DoneAt.IsZero() {
		t.Error("the command started, and its approval's follow-up is still open")
	}
}
