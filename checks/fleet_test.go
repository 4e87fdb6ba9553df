package checks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/policy"
)

// loopbackFleet is 10 SSH hosts on loopback: nine on one sshd
// (127.0.0.1-9) and host-10 on its own sshd, so it can be stopped alone.
func loopbackFleet(t *testing.T) (*hosts.Fleet, *sshtest.Server) {
	t.Helper()
	var ips []string
	for i := 1; i <= 9; i++ {
		ips = append(ips, fmt.Sprintf("127.0.0.%d", i))
	}
	nine := sshtest.Start(t, sshtest.Options{Addrs: ips})
	lone := sshtest.Start(t, sshtest.Options{Addrs: []string{"127.0.0.10"}})
	known := sshtest.KnownHostsOf(t, nine, lone)
	cfg := hosts.Config{SSH: hosts.SSHConfig{KnownHosts: known, IdentityFiles: []string{nine.IdentityFile, lone.IdentityFile}, User: nine.User}}
	for i, a := range append(nine.Addrs, lone.Addrs...) {
		cfg.Hosts = append(cfg.Hosts, hosts.HostConfig{Name: fmt.Sprintf("host-%02d", i+1), Address: a, Groups: []string{"prod"}})
	}
	f, err := hosts.NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f, lone
}

// TestRunOverLoopbackFleet runs the checks over 10 real sshd
// hosts; stopping one host's sshd makes the next report lead with it as a
// new failure, and starting it again reports it recovered.
func TestRunOverLoopbackFleet(t *testing.T) {
	t.Parallel()
	fleet, lone := loopbackFleet(t)
	pol, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Checks: []Check{
			{Name: "disk", Targets: "group:prod", Command: "df -P / | awk 'NR==2 {print $5+0}'", Expect: Expect{WarnAbove: ptr(101.0), FailAbove: ptr(102.0)}},
			{Name: "shell", Targets: "group:prod", Command: "echo active", Expect: Expect{OutputMatches: "^active$"}},
		},
		Schedules: []Schedule{{Name: "morning", Cron: "@hourly", Checks: []string{"disk", "shell"}}},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.ValidateFleet(fleet.Inventory, PolicyOf(pol)); err != nil {
		t.Fatalf("the issue's read-only checks need approval: %v", err)
	}
	r := &Runner{Hosts: fleet, Resolver: fleet.Inventory, Policy: PolicyOf(pol), Store: openStore(t)}

	rep, err := r.Run(bg, cfg.Schedules[0], cfg.Checks)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Counts(); c.OK != 20 || len(rep.Hosts) != 10 {
		t.Fatalf("first run over 10 hosts: %+v; want 20 ok:\n%s", c, joined(rep.Details(32000)))
	}
	for _, res := range rep.Results {
		if res.Check == "disk" && !res.HasValue {
			t.Errorf("%s: no disk usage read from %q", res.Host, res.Output)
		}
	}

	if err := lone.Stop(); err != nil {
		t.Fatal(err)
	}
	rep, err = r.Run(bg, cfg.Schedules[0], cfg.Checks)
	if err != nil {
		t.Fatal(err)
	}
	summary := rep.Summary(3000).Text
	lines := strings.Split(summary, "\n")
	if c := rep.Counts(); c.Unreachable != 1 || c.NewFailures != 1 || c.OK != 18 {
		t.Errorf("with host-10's sshd stopped: %+v; want 18 ok, 1 unreachable, 1 new failure", c)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "⊘ host-10") || !strings.Contains(lines[1], "**new**") {
		t.Errorf("the report does not lead with host-10 as new:\n%s", summary)
	}

	if err := lone.Start(); err != nil {
		t.Fatal(err)
	}
	rep, err = r.Run(bg, cfg.Schedules[0], cfg.Checks)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Counts(); c.OK != 20 || c.Recovered != 2 || !strings.Contains(rep.SummaryLine(), "2 recovered") {
		t.Errorf("with host-10 back: %+v, %q; want 20 ok, 2 recovered", c, rep.SummaryLine())
	}
	if d := joined(rep.Details(3000)); !strings.Contains(d, "✓ host-10 · disk") || !strings.Contains(d, "was unreachable since") {
		t.Errorf("details do not show host-10 recovered:\n%s", d)
	}
}
