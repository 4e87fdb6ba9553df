package approvals

import (
	"sync"

	"github.com/opsbot/opsbot/hosts"
)

// batchPolicy is a HostPolicy that decides many hosts faster at once than
// one after another; Guard.Decide uses it when the policy is one.
type batchPolicy interface {
	// CheckAll is Check on each of hosts, in their order.
	CheckAll(hosts []string, command string) []HostDecision
}

var _ batchPolicy = FleetPolicy{}

// CheckAll is Check on every host, the hosts checked concurrently (at most
// hosts.DefaultConcurrency at once): an allow on an SSH host waits for its
// sandbox to be known, which on a cold pool is a connect and a probe, so
// a fan-out's decision costs about one host's wait, not the sum of all.
func (p FleetPolicy) CheckAll(names []string, command string) []HostDecision {
	out := make([]HostDecision, len(names))
	slots := make(chan struct{}, hosts.DefaultConcurrency)
	var wg sync.WaitGroup
	for i, h := range names {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i] = p.Check(h, command)
		})
	}
	wg.Wait()
	return out
}

// checkAll is p's decision on command for each host, in their order.
func checkAll(p HostPolicy, hosts []string, command string) []HostDecision {
	if b, ok := p.(batchPolicy); ok && len(hosts) > 1 {
		return b.CheckAll(hosts, command)
	}
	out := make([]HostDecision, len(hosts))
	for i, h := range hosts {
		out[i] = p.Check(h, command)
	}
	return out
}
