package approvals

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// barrier is a RemoteSandboxes whose every answer waits until all n hosts
// have been asked (or the caller's bound ends): it answers at once only
// when the hosts are asked concurrently.
type barrier struct {
	n       int
	mu      sync.Mutex
	asked   int
	all     chan struct{}
	missed  bool // a call's bound ended before all were asked
	missing string
}

func (b *barrier) MissingSandbox(ctx context.Context, h hosts.Host) error {
	b.mu.Lock()
	if b.asked++; b.asked == b.n {
		close(b.all)
	}
	missed := b.missed
	b.mu.Unlock()
	if !missed {
		select {
		case <-b.all:
		case <-ctx.Done():
			b.mu.Lock()
			b.missed = true
			b.mu.Unlock()
		}
	}
	if h.Name == b.missing {
		return errors.New("no sandbox on " + h.Name + ": install bubblewrap there")
	}
	return nil
}

// TestGuardDecidesAFleetsHostsConcurrently: a decision over many SSH hosts
// asks for their sandboxes all at once (on a cold pool each is a connect
// and a probe: one after another, a 1,000-host `uptime` waited minutes
// before its first host ran), and still is the strictest host's.
func TestGuardDecidesAFleetsHostsConcurrently(t *testing.T) {
	t.Parallel()
	const n = 8
	var hc []hosts.HostConfig
	var names []string
	for i := range n {
		hc = append(hc, hosts.HostConfig{Name: fmt.Sprintf("web-%d", i), Address: fmt.Sprintf("10.0.0.%d:22", i+1)})
		names = append(names, hc[i].Name)
	}
	inv, err := hosts.NewInventory(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"}, Hosts: hc})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	b := &barrier{n: n, all: make(chan struct{}), missing: "web-5"}
	g := &Guard{Policy: FleetPolicy{Policy: pol, Inventory: inv, Sandboxes: b}}
	d := g.Decide(names, "uptime")
	if b.missed {
		t.Fatalf("the hosts' sandboxes were asked for one after another (a call waited for the others in vain)")
	}
	if b.asked != n {
		t.Errorf("%d hosts asked for their sandbox; want %d", b.asked, n)
	}
	if d.Action != policy.Approve || len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0], "no sandbox on web-5") {
		t.Errorf("decision: %s %v; want approve, for web-5's missing sandbox", d.Action, d.Reasons)
	}
}
