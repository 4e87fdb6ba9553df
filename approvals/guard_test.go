package approvals

import (
	"context"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// approvesAs is an Approver whose people approve, claiming approval id.
type approvesAs string

func (a approvesAs) Approve(_ context.Context, _ CommandRequest, pending func(Pending)) (Outcome, error) {
	pending(Pending{ID: string(a)})
	return Outcome{Approved: true, State: "approved", Approval: string(a)}, nil
}

// asks is a HostPolicy that wants a person for every command.
type asks struct{}

func (asks) Check(string, string) HostDecision {
	return HostDecision{Action: policy.Approve, Reasons: []string{"changes the host"}}
}

// resolver is a hosts.Executor that only resolves: every target is the
// local host.
type resolver struct{ hosts.Executor }

func (resolver) Resolve(string) ([]string, error) { return []string{hosts.LocalHost}, nil }

// The approval people gave is named in the Permit, so that the run carries
// it to the ledger (hosts.Confinement.Approval): no side channel.
func TestPermitNamesTheClaimedApproval(t *testing.T) {
	t.Parallel()
	g := &Guard{Policy: asks{}, Approver: approvesAs("a-9"), Exec: resolver{}}
	p, err := g.Permit(context.Background(), CommandRequest{Target: "local", Command: "systemctl restart nginx"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Approved || p.Approval != "a-9" {
		t.Errorf("permit %+v; want approved, naming a-9", p)
	}
}
