package approvals

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// sandboxesFunc is a RemoteSandboxes whose answer the test decides.
type sandboxesFunc func(h hosts.Host) error

func (f sandboxesFunc) MissingSandbox(_ context.Context, h hosts.Host) error { return f(h) }

// An allow on an SSH host without a sandbox (under required) becomes
// approve with the host's fix as the first reason; what the policy does
// not allow, the local host and the hosts with a sandbox are untouched.
func TestFleetPolicyAsksWhereNoSandboxHolds(t *testing.T) {
	t.Parallel()
	inv, err := hosts.NewInventory(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"},
		Hosts: []hosts.HostConfig{{Name: "boxed", Address: "h:22"}, {Name: "bare", Address: "h:22"}}})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	pc := FleetPolicy{Policy: pol, Inventory: inv, Sandboxes: sandboxesFunc(func(h hosts.Host) error {
		asked = append(asked, h.Name)
		if h.Name == "bare" {
			return errors.New("no sandbox on bare: install bubblewrap there")
		}
		return nil
	})}
	tests := []struct {
		host, cmd string
		want      policy.Action
		reason    string
	}{
		{"boxed", "uptime", policy.Allow, ""},
		{"bare", "uptime", policy.Approve, "install bubblewrap"},
		{"local", "uptime", policy.Allow, ""},
		{"bare", "rm -rf /srv/x", policy.Approve, ""},
	}
	for _, tt := range tests {
		d := pc.Check(tt.host, tt.cmd)
		if d.Action != tt.want || (tt.reason != "" && (len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0], tt.reason))) {
			t.Errorf("%s on %s: %s %v, want %s with %q first", tt.cmd, tt.host, d.Action, d.Reasons, tt.want, tt.reason)
		}
		if d.Action == policy.Allow && len(d.Hidden) == 0 {
			t.Errorf("%s on %s: allowed without the secret paths to mask", tt.cmd, tt.host)
		}
		if d.Action != policy.Allow && (len(d.Hidden) > 0 || len(d.ConnectPorts) > 0) {
			t.Errorf("%s on %s: %s carries a sandbox's settings", tt.cmd, tt.host, d.Action)
		}
	}
	if strings.Join(asked, ",") != "boxed,bare" {
		t.Errorf("hosts asked for their sandbox: %v; want the SSH hosts of allowed commands only", asked)
	}
}
