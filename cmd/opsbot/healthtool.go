package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/store"
)

// healthReports gives the agent's health_results tool the latest stored
// report of each configured schedule (checks.LatestReport): read-only, it
// runs nothing.
type healthReports struct {
	store     *store.Store
	schedules []checks.Schedule
}

var _ tools.HealthReports = healthReports{}

// Schedules are the configured schedules' names.
func (h healthReports) Schedules() []string {
	names := make([]string, len(h.schedules))
	for i, s := range h.schedules {
		names[i] = s.Name
	}
	return names
}

// Latest is a schedule's last report: its summary line and the details,
// failures first.
func (h healthReports) Latest(ctx context.Context, name string) (string, error) {
	for _, s := range h.schedules {
		if s.Name != name {
			continue
		}
		rep, err := checks.LatestReport(ctx, h.store.Checks(), s)
		if errors.Is(err, checks.ErrNoRuns) {
			return "", fmt.Errorf("schedule %s has not run yet", name)
		}
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (ran %s)\n", rep.SummaryLine(), rep.At.UTC().Format("2006-01-02 15:04 UTC"))
		for _, m := range rep.Details(8000) {
			b.WriteString(m.Text)
			b.WriteString("\n")
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("there is no schedule %q (schedules: %s)", name, strings.Join(h.Schedules(), ", "))
}
