package approvals

import (
	"sync"

	"github.com/opsbot/opsbot/hosts"
)

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

// checkAll is p's decision on command for each host, in their order;
// concurrent for a FleetPolicy itself (a type that wraps one keeps its
// own Check, host by host).
func checkAll(p HostPolicy, hosts []string, command string) []HostDecision {
	if fp, ok := p.(FleetPolicy); ok && len(hosts) > 1 {
		return fp.CheckAll(hosts, command)
	}
	out := make([]HostDecision, len(hosts))
	for i, h := range hosts {
		out[i] = p.Check(h, command)
	}
	return out
}
