package checks

import (
	"context"
	"fmt"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// BenchmarkReport1000Hosts: design §7 targets a 1,000-host check report
// built and committed in ≤20 ms. One op judges a check on 1,000 hosts
// (commands answered at once in memory, so the fleet's own time is left
// out), compares with the previous run read from a real SQLite store,
// commits the run and renders the summary and details for Slack.
func BenchmarkReport1000Hosts(b *testing.B) { benchReport(b, false) }

// BenchmarkReport1000Hosts2Checks is the same with two checks per host
// (2,000 results).
func BenchmarkReport1000Hosts2Checks(b *testing.B) { benchReport(b, true) }

func benchReport(b *testing.B, two bool) {
	names := hostNames(1000)
	fleet := hosts.RunnerFunc(func(_ context.Context, h hosts.Host, cmd string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		if cmd == "nginx" {
			return hosts.Result{Output: []byte("active\n")}, nil
		}
		return hosts.Result{Output: []byte(fmt.Sprintf("%d%%\n", len(h.Name)*7%100))}, nil
	})
	r := &Runner{Hosts: fleet, Resolver: namedHosts(names...), Policy: allowAll, Store: openStore(b)}
	checks := []Check{{Name: "disk", Targets: "group:all", Command: "df", Expect: Expect{WarnAbove: ptr(80.0), FailAbove: ptr(90.0)}}}
	if two {
		checks = append(checks, Check{Name: "nginx", Targets: "group:all", Command: "nginx", Expect: Expect{OutputMatches: "^active$"}})
	}
	s := Schedule{Name: "bench", Cron: "@hourly"}
	if _, err := r.Run(bg, s, checks); err != nil { // a previous run to compare with
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := r.Run(bg, s, checks)
		if err != nil {
			b.Fatal(err)
		}
		rep.Summary(3000)
		rep.Details(3000)
	}
}
