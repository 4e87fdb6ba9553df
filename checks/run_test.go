package checks

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/hosts"
)

// TestRunNeverRunsWhatNeedsApproval: the policy is asked again at run
// time, so a command it does not allow on a host is judged a failure that
// says why, and never reaches that host.
func TestRunNeverRunsWhatNeedsApproval(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	ran := map[string]bool{}
	fleet := hosts.RunnerFunc(func(_ context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		mu.Lock()
		ran[h.Name] = true
		mu.Unlock()
		return hosts.Result{Output: []byte("ok")}, nil
	})
	pol := PolicyFunc(func(h hosts.Host, _ string) (bool, string) {
		return h.Name != "db-1", "the policy says approve: db hosts need a person"
	})
	r := &Runner{Hosts: fleet, Resolver: namedHosts("web-1", "db-1"), Policy: pol, Store: openStore(t)}
	rep, err := r.Run(bg, Schedule{Name: "s", Cron: "@hourly"}, []Check{{Name: "c", Targets: "group:all", Command: "restart-thing"}})
	if err != nil {
		t.Fatal(err)
	}
	if ran["db-1"] || !ran["web-1"] {
		t.Fatalf("commands ran on %v; want web-1 only", ran)
	}
	var db Result
	for _, res := range rep.Results {
		if res.Host == "db-1" {
			db = res
		}
	}
	if db.Status != StatusFail || !strings.Contains(db.Detail, "needs approval (the policy says approve: db hosts need a person)") {
		t.Errorf("db-1 judged %s %q; want a failure naming the policy's reason", db.Status, db.Detail)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering the collectors twice on one registry succeeded")
	}
	outputs := map[string]string{"web-1": "95", "web-2": "10"}
	fleet := hosts.RunnerFunc(func(_ context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		return hosts.Result{Output: []byte(outputs[h.Name])}, nil
	})
	r := &Runner{Hosts: fleet, Resolver: namedHosts("web-1", "web-2"), Policy: allowAll, Store: openStore(t), Metrics: m}
	checks := []Check{{Name: "disk", Targets: "group:all", Command: "df", Expect: Expect{FailAbove: ptr(90.0)}},
		{Name: "load", Targets: "group:all", Command: "uptime"}}
	for range 2 {
		if _, err := r.Run(bg, Schedule{Name: "morning"}, checks); err != nil {
			t.Fatal(err)
		}
	}
	if got := metricValue(t, reg, "opsbot_check_runs_total", "morning"); got != 2 {
		t.Errorf("runs = %v; want 2", got)
	}
	if got := metricValue(t, reg, "opsbot_check_failures_total", "disk"); got != 2 {
		t.Errorf("disk failures = %v; want 2 (web-1 in each run)", got)
	}
	if got := metricValue(t, reg, "opsbot_check_failures_total", "load"); got != 0 {
		t.Errorf("load failures = %v; want 0", got)
	}
	if got := metricValue(t, reg, "opsbot_check_last_run_timestamp_seconds", "morning"); got < 1e9 {
		t.Errorf("last run time = %v; want a Unix time", got)
	}
	var nilMetrics *Metrics
	nilMetrics.observe(Report{}, r.now()) // a nil *Metrics records nothing, without panicking
}

// metricValue reads one series from the registry, as a scrape would; -1
// when absent.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() != label {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
