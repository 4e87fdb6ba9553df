package checks

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLatestReportMatchesTheRun: the report rebuilt from the store says
// what the run's own report said.
func TestLatestReportMatchesTheRun(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostAlways)
	if _, err := LatestReport(bg, e.runner.Store, e.sched); !errors.Is(err, ErrNoRuns) {
		t.Fatalf("before any run: err = %v; want ErrNoRuns", err)
	}
	e.runAt(e.now, map[string]string{"web-01": "85%"})
	e.runAt(e.now.Add(time.Hour), map[string]string{"web-01": "95%"})
	rep, err := LatestReport(bg, e.runner.Store, e.sched)
	if err != nil {
		t.Fatal(err)
	}
	want := "✗ 1 failing · ✓ 1 ok — 1 new failure since 09:00"
	if got := rep.SummaryLine(); got != want {
		t.Errorf("rebuilt summary = %q; want %q", got, want)
	}
	if d := joined(rep.Details(3000)); !strings.Contains(d, "✗ web-01 · disk 85% → 95% — 95% is above 90% · **new**") {
		t.Errorf("rebuilt details:\n%s", d)
	}
}
