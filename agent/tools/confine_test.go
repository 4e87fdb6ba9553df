package tools

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// confinedExec records the confinement each run was given.
type confinedExec struct {
	mu   sync.Mutex
	runs []hosts.Confinement
}

func (e *confinedExec) Resolve(target string) ([]string, error) { return []string{target}, nil }

func (e *confinedExec) Exec(_ context.Context, names []string, _ string, opts hosts.ExecOptions) []hosts.ExecResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs = append(e.runs, opts.Confinement)
	return []hosts.ExecResult{{Host: names[0]}}
}

// The confinement comes from the policy's decision, never from the model:
// what the policy allows runs sandboxed with the ports it named, what a
// person approved runs outside the sandbox — for run_command, start_job
// and skill scripts alike.
func TestConfinementFollowsTheDecision(t *testing.T) {
	t.Parallel()
	pol := policyFunc(func(_, command string) approvals.HostDecision {
		if command == "curl -s http://127.0.0.1:8080/" {
			return approvals.HostDecision{Action: policy.Allow, ConnectPorts: []uint16{8080}}
		}
		return approvals.HostDecision{Action: policy.Approve, Reasons: []string{"changes things"}}
	})
	ex := &confinedExec{}
	g := &approvals.Guard{Policy: pol, Approver: &fakeApprover{answer: approvals.Outcome{Approved: true, State: "approved"}}, Exec: ex}
	runCommand(t, g, "local", "curl -s http://127.0.0.1:8080/")
	runCommand(t, g, "local", "touch /tmp/x")
	want := []hosts.Confinement{{ConnectPorts: []uint16{8080}}, {Approved: true}}
	if len(ex.runs) != 2 || ex.runs[0].Approved || !slices.Equal(ex.runs[0].ConnectPorts, want[0].ConnectPorts) || !ex.runs[1].Approved {
		t.Errorf("confinements %+v, want %+v", ex.runs, want)
	}
}

// Over several hosts, the allowed ports of each host's decision add up.
func TestPermitJoinsThePortsOfEachHost(t *testing.T) {
	t.Parallel()
	g := &approvals.Guard{Policy: policyFunc(func(host, _ string) approvals.HostDecision {
		return approvals.HostDecision{Action: policy.Allow, ConnectPorts: map[string][]uint16{"a": {80}, "b": {443}}[host]}
	}), Exec: &shellExec{}}
	p, err := g.Permit(context.Background(), approvals.CommandRequest{Target: "a,b", Command: "curl x"}, nil)
	if err != nil || p.Approved || !slices.Equal(p.ConnectPorts, []uint16{80, 443}) {
		t.Errorf("permit %+v, %v; want unapproved with ports 80 and 443", p, err)
	}
}
