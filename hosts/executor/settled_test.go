package executor

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// processes is a hosts.Tracker that keeps what it was told started.
type processes struct {
	mu   sync.Mutex
	seen []hosts.Process
}

func (p *processes) Started(_ context.Context, pr hosts.Process) (func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, pr)
	return nil, nil
}

// The approval a run claimed reaches the Tracker with the command's
// process on every host it starts on: that is how the ledger closes its
// follow-up in the transaction that records the start.
func TestFleetHandsTheClaimedApprovalToTheTracker(t *testing.T) {
	t.Parallel()
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	seen := &processes{}
	fleet.Track(seen)
	ex := &Fleet{Fleet: fleet}
	c := hosts.Confinement{Approved: true, Approval: "a-42"}
	if r := ex.Exec(context.Background(), []string{"local"}, "true", hosts.ExecOptions{Confinement: c})[0]; r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("result: %+v", r)
	}
	if r := ex.Exec(context.Background(), []string{"local"}, "true", hosts.ExecOptions{})[0]; r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("result without an approval: %+v", r)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.seen) != 2 || seen.seen[0].Approval != "a-42" || seen.seen[1].Approval != "" {
		t.Errorf("tracked %+v; want the approved run's process to carry a-42, the other none", seen.seen)
	}
}

// finished is a FollowUpFinisher that keeps the approvals it closed.
type finished struct {
	mu  sync.Mutex
	ids []string
}

func (f *finished) FinishFollowUp(_ context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, id)
	return true, nil
}

// A run that claimed an approval closes its follow-up once it has
// returned, started or not (here: an unknown host); a run without one
// closes nothing.
func TestSettledClosesTheClaimedApprovalAfterTheRun(t *testing.T) {
	t.Parallel()
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	fu := &finished{}
	ex := Settled{Executor: &Fleet{Fleet: fleet}, FollowUps: fu}
	c := hosts.Confinement{Approved: true, Approval: "a-7"}
	if r := ex.Exec(context.Background(), []string{"no-such-host"}, "true", hosts.ExecOptions{Confinement: c}); len(r) != 1 || r[0].Err == nil {
		t.Fatalf("an unknown host ran: %+v", r)
	}
	ex.Exec(context.Background(), []string{"local"}, "true", hosts.ExecOptions{})
	if !slices.Equal(fu.ids, []string{"a-7"}) {
		t.Errorf("closed %v; want a-7 once", fu.ids)
	}
}
