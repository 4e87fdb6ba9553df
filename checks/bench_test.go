package checks

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
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
	cpu0 := cpuTime()
	for b.Loop() {
		rep, err := r.Run(bg, s, checks)
		if err != nil {
			b.Fatal(err)
		}
		rep.Summary(3000)
		rep.Details(3000)
	}
	// The process's CPU time per op, every thread and GC included: on a
	// shared, loaded machine it says more than the wall time.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time (user and system) the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRun100HostsVsHostsExec runs `echo 42` on a 100-host loopback
// sshd fleet two ways, interleaved in every iteration so that load
// elsewhere on the machine hits both alike, on warm connections:
//
//   - exec: hosts.RunMany, as `opsbot hosts exec` does;
//   - check: Runner.Run of a check with that command — policy, judging,
//     comparison with the previous run and the commit included.
//
// check-over-exec-% is the median of the per-iteration overheads; the
// issue's target is ≤5 %.
func BenchmarkRun100HostsVsHostsExec(b *testing.B) {
	var ips []string
	for i := range 100 {
		ips = append(ips, fmt.Sprintf("127.0.%d.%d", 1+i/200, 1+i%200))
	}
	fl, err := sshtest.NewFleet(b.TempDir(), ips, sshtest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fl.Stop()
	cfg := hosts.Config{SSH: hosts.SSHConfig{KnownHosts: fl.KnownHosts, IdentityFiles: []string{fl.IdentityFile}, User: fl.User}}
	for i, a := range fl.Addrs {
		cfg.Hosts = append(cfg.Hosts, hosts.HostConfig{Name: fmt.Sprintf("h%03d", i), Address: a, Groups: []string{"all"}})
	}
	fleet, err := hosts.NewFleet(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	list, _ := fleet.Inventory.Resolve("group:all")
	r := &Runner{Hosts: fleet, Resolver: fleet.Inventory, Policy: allowAll, Store: openStore(b)}
	checks := []Check{{Name: "echo", Targets: "group:all", Command: "echo 42", Expect: Expect{FailAbove: ptr(50.0)}}}
	s := Schedule{Name: "bench", Cron: "@hourly"}
	if _, err := r.Run(bg, s, checks); err != nil { // dial every host outside the loop
		b.Fatal(err)
	}
	var exec, check, over []float64
	for b.Loop() {
		t0 := time.Now()
		for _, res := range hosts.RunMany(bg, fleet, list, "echo 42", hosts.Options{}, hosts.FanOut{}) {
			if res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		t1 := time.Now()
		rep, err := r.Run(bg, s, checks)
		if err != nil || rep.Counts().OK != 100 {
			b.Fatal(rep.SummaryLine(), err)
		}
		t2 := time.Now()
		e, c := t1.Sub(t0).Seconds()*1000, t2.Sub(t1).Seconds()*1000
		exec, check, over = append(exec, e), append(check, c), append(over, (c-e)/e*100)
	}
	b.ReportMetric(median(exec), "exec-ms")
	b.ReportMetric(median(check), "check-ms")
	b.ReportMetric(median(over), "check-over-exec-%")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
