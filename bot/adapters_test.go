package bot

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/store"
)

// A session's working directory is the bot's own: on an SSH host the
// command runs in its login directory instead of failing to cd.
func TestFleetExecutorAppliesTheDirectoryLocallyOnly(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	fleet, err := hosts.NewFleet(hosts.Config{
		SSH:   hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User},
		Hosts: []hosts.HostConfig{{Name: "web-1", Address: srv.Addr()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	local := t.TempDir() + "/only-on-the-bot"
	ex := &FleetExecutor{Fleet: fleet}
	res := ex.Exec(context.Background(), []string{"local", "web-1"}, "pwd", hosts.ExecOptions{Dir: t.TempDir()})
	if len(res) != 2 || res[0].Err != nil || res[1].Err != nil || res[0].ExitCode != 0 || res[1].ExitCode != 0 {
		t.Fatalf("results = %+v", res)
	}
	res = ex.Exec(context.Background(), []string{"web-1"}, "pwd", hosts.ExecOptions{Dir: local})
	if res[0].ExitCode != 0 || strings.Contains(res[0].Stdout+res[0].Stderr, "only-on-the-bot") {
		t.Errorf("the remote host was sent the bot's directory: %+v", res[0])
	}
}

// A request is made by the person of the session's own platform: with the
// approver wired for another platform, a Slack user's request must still be
// recorded as slack:U1, so that U1's own Slack click is refused as
// self-approval (before, it was recorded as web:U1 and slack:U1 could
// approve it).
func TestRequesterIsOfTheSessionsPlatform(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gate := approvals.NewGate(st, approvals.GateConfig{Approvers: []approvals.ApproverConfig{
		{Slack: approvals.SlackApprovers{Users: []string{"U1", "U2"}}}}}, approvals.GateOptions{})
	g := GateApprover{Gate: gate, Store: st, Platform: "web"}
	pending := make(chan approvals.Pending, 1)
	done := make(chan approvals.Outcome, 1)
	go func() {
		out, err := g.Approve(context.Background(), approvals.CommandRequest{Requester: approvals.Person{Platform: "slack", ID: "U1"}, Channel: "C1", Target: "local", Hosts: []string{"local"},
			Command: "systemctl restart nginx"}, func(p approvals.Pending) { pending <- p })
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	p := <-pending
	if p.Requester != "slack:U1" {
		t.Errorf("the request is recorded as made by %q, want slack:U1", p.Requester)
	}
	self, err := gate.Vote(context.Background(), p.ID, approvals.Person{Platform: "slack", ID: "U1"}, approvals.VoteApprove)
	if err != nil {
		t.Fatal(err)
	}
	if self.Status != approvals.VoteRefused {
		t.Errorf("U1 approving U1's own request on Slack: %v, want refused", self.Status)
	}
	if _, err := gate.Vote(context.Background(), p.ID, approvals.Person{Platform: "slack", ID: "U2"}, approvals.VoteApprove); err != nil {
		t.Fatal(err)
	}
	if out := <-done; !out.Approved {
		t.Errorf("U2's approval: %+v, want approved", out)
	}
}
