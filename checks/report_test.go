package checks

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var berlin, _ = time.LoadLocation("Europe/Berlin")

// fixtureTimes: this run at 09:00 Berlin on Tue 2026-11-24, the previous
// one at 09:00 the day before.
var (
	fixtureAt   = time.Date(2026, 11, 24, 9, 0, 0, 0, berlin)
	fixturePrev = fixtureAt.AddDate(0, 0, -1)
)

// fixture is a report over n hosts (web-01…) and two checks, disk and
// nginx, with a warning, an old failure, a new failure, a recovery and (at
// 7 hosts or more) an unreachable host and a second recovery.
func fixture(n int) Report {
	disk := Check{Name: "disk", Expect: Expect{WarnAbove: ptr(80.0), FailAbove: ptr(90.0)}}
	nginx := Check{Name: "nginx", Expect: Expect{OutputMatches: "^active$"}}
	prev := CheckRun{Schedule: "morning", StartedAt: fixturePrev}
	var results []Result
	add := func(r Result, p CheckResult) {
		results = append(results, r)
		p.Host, p.Check = r.Host, r.Check
		prev.Results = append(prev.Results, p)
	}
	for i, h := range hostNames(n) {
		value := float64(10 + (i*7)%60)
		d := Result{Host: h, Check: "disk", Status: StatusOK, Value: value, HasValue: true, Unit: "%"}
		pd := CheckResult{Status: "ok", Value: value, HasValue: true}
		ng := Result{Host: h, Check: "nginx", Status: StatusOK, Output: "active"}
		png := CheckResult{Status: "ok"}
		switch h {
		case "web-01":
			d.Status, d.Value, d.Detail = StatusWarn, 85, "85% is above 80%"
			pd = CheckResult{Status: "warn", Value: 82, HasValue: true, Since: fixtureAt.AddDate(0, 0, -2)}
		case "web-02":
			ng.Status, ng.Output, ng.Detail = StatusFail, "inactive", "exit 3 (expected 0)"
			png = CheckResult{Status: "fail", Since: fixtureAt.AddDate(0, 0, -3)}
		case "web-03":
			d.Status, d.Value, d.Detail = StatusFail, 93, "93% is above 90%"
			pd.Value = 78
			png = CheckResult{Status: "fail", Since: fixturePrev}
		case "web-07":
			d = Result{Host: h, Check: "disk", Status: StatusUnreachable, Detail: "connection refused (is sshd running?)"}
			ng = Result{Host: h, Check: "nginx", Status: StatusUnreachable, Detail: "connection refused (is sshd running?)"}
		case "web-50":
			pd = CheckResult{Status: "fail", Value: 95, HasValue: true, Since: fixturePrev}
		}
		add(d, pd)
		add(ng, png)
	}
	s := Schedule{Name: "morning", Cron: "CRON_TZ=Europe/Berlin 0 9 * * 1-5"}
	rep := newReport(s, []Check{disk, nginx}, fixtureAt, results, []CheckRun{prev})
	rep.Took = 1234 * time.Millisecond
	return rep
}

func TestSummaryLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		hosts int
		want  string
	}{
		{3, "✗ 2 failing · ⚠ 1 warning · ✓ 3 ok — 1 new failure, 1 recovered since 09:00 yesterday"},
		{100, "✗ 2 failing · ⚠ 1 warning · ✓ 195 ok · ⊘ 1 unreachable — 2 new failures, 2 recovered since 09:00 yesterday"},
	}
	for _, tt := range tests {
		if got := fixture(tt.hosts).SummaryLine(); got != tt.want {
			t.Errorf("%d hosts: SummaryLine =\n  %s\nwant\n  %s", tt.hosts, got, tt.want)
		}
	}
	first := fixture(3)
	first.PrevAt = time.Time{}
	if got := first.SummaryLine(); !strings.HasSuffix(got, "— first run") {
		t.Errorf("a first run's summary = %q", got)
	}
}

func TestReportOrderAndChanges(t *testing.T) {
	t.Parallel()
	rep := fixture(100)
	text := joined(rep.Details(32000))
	order := []string{
		"✗ web-03 · disk 78% → 93% — 93% is above 90% · **new**",
		"✗ web-02 · nginx `inactive` — exit 3 (expected 0) · since Sat 09:00",
		"⚠ web-01 · disk 82% → 85% — 85% is above 80% · since Sun 09:00",
		"⊘ web-07 — connection refused (is sshd running?) · **new**",
		"✓ web-50 · disk 95% → 53% — was failing since 09:00 yesterday",
		"web-07  ??",
	}
	last := -1
	for _, want := range order {
		i := strings.Index(text, want)
		if i < 0 {
			t.Fatalf("details lack %q:\n%s", want, text)
		}
		if i < last {
			t.Errorf("%q is out of order (failures, warnings, unreachable, recovered, grid)", want)
		}
		last = i
	}
	if !rep.Changed() || !rep.Failing() {
		t.Error("the fixture should count as changed and failing")
	}
}

func TestSinceCarriesOverWhileTheStatusHolds(t *testing.T) {
	t.Parallel()
	rep := fixture(7)
	for _, r := range rep.Results {
		switch {
		case r.Host == "web-02" && r.Check == "nginx" && !r.Since.Equal(fixtureAt.AddDate(0, 0, -3)):
			t.Errorf("an ongoing failure's since = %v; want it carried from the previous run", r.Since)
		case r.Host == "web-03" && r.Check == "disk" && !r.Since.Equal(fixtureAt):
			t.Errorf("a new failure's since = %v; want this run", r.Since)
		case r.Host == "web-04" && r.Check == "disk" && !r.Since.Equal(fixturePrev):
			t.Errorf("an ok without since in the previous run: since = %v; want the previous run's start", r.Since)
		}
	}
}

// TestReportGolden renders the report at 3 and 100 hosts within each
// platform's limit (Slack's 3,000 per section, Discord's 2,000, the web
// chat's 32,000): every message fits and every code block is closed.
func TestReportGolden(t *testing.T) {
	t.Parallel()
	limits := []struct {
		platform string
		max      int
	}{{"slack", 3000}, {"discord", 2000}, {"web", 32000}}
	for _, n := range []int{3, 100} {
		for _, l := range limits {
			rep := fixture(n)
			msgs := append([]connectors.Message{rep.Summary(l.max)}, rep.Details(l.max)...)
			for i, m := range msgs {
				if runes(m.Text) > l.max {
					t.Errorf("%d hosts on %s: message %d has %d runes, over %d", n, l.platform, i, runes(m.Text), l.max)
				}
				if strings.Count(m.Text, fence)%2 != 0 {
					t.Errorf("%d hosts on %s: message %d leaves a code block open:\n%s", n, l.platform, i, m.Text)
				}
			}
			golden(t, fmt.Sprintf("report_%dhosts_%s.golden", n, l.platform), render(msgs))
		}
	}
}

// render is messages as a reviewer reads them in the golden files.
func render(msgs []connectors.Message) string {
	var b strings.Builder
	for i, m := range msgs {
		what := "details"
		if i == 0 {
			what = "summary (the day's message, edited each run)"
		}
		fmt.Fprintf(&b, "===== message %d: %s · %d chars =====\n%s\n", i+1, what, runes(m.Text), m.Text)
		if m.Context != "" {
			fmt.Fprintf(&b, "[context] %s\n", m.Context)
		}
	}
	return b.String()
}

func joined(msgs []connectors.Message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, m.Text)
	}
	return strings.Join(parts, "\n")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./checks -run Golden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the rendering (go test ./checks -run Golden -update rewrites it); got:\n%s", path, got)
	}
}

func TestWhen(t *testing.T) {
	t.Parallel()
	rep := Report{At: fixtureAt, Zone: berlin}
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{fixtureAt.Add(-30 * time.Minute), "08:30"},
		{fixturePrev, "09:00 yesterday"},
		{fixtureAt.AddDate(0, 0, -3), "Sat 09:00"},
		{fixtureAt.AddDate(0, 0, -10), "2026-11-14 09:00"},
	} {
		if got := rep.when(tt.t); got != tt.want {
			t.Errorf("when(%v) = %q; want %q", tt.t, got, tt.want)
		}
	}
}

// TestDetailsSplitAtTheLimit: at 1,000 hosts the details take several
// messages; each fits, each code block is closed in its message and
// reopened in the next, and no grid cell is lost or repeated.
func TestDetailsSplitAtTheLimit(t *testing.T) {
	t.Parallel()
	msgs := fixture(1000).Details(2000)
	if len(msgs) < 5 {
		t.Fatalf("%d messages for 1,000 hosts at 2,000 chars", len(msgs))
	}
	cells := 0
	for i, m := range msgs {
		if runes(m.Text) > 2000 || strings.Count(m.Text, fence)%2 != 0 {
			t.Errorf("message %d: %d runes, %d fences", i, runes(m.Text), strings.Count(m.Text, fence))
		}
		cells += strings.Count(m.Text, "web-")
	}
	// Each host once in the grid, plus the named lines: web-01 warn, web-02
	// and web-03 failing, web-07 unreachable, web-03 and web-50 recovered.
	if want := 1000 + 6; cells != want {
		t.Errorf("%d host names across the messages; want %d", cells, want)
	}
}

func TestSummaryKeepsWhatFitsAndCountsTheRest(t *testing.T) {
	t.Parallel()
	lines := make([]string, 50)
	for i := range lines {
		lines[i] = fmt.Sprintf("✗ web-%02d · disk 95%% — 95%% is above 90%% · **new**", i)
	}
	got := fitLines("**Health · s** — ✗ 50 failing", lines, 500)
	if runes(got) > 500 || !strings.HasSuffix(got, "more in the thread") || !strings.Contains(got, "web-00") {
		t.Errorf("fitLines at 500 = %d runes:\n%s", runes(got), got)
	}
	shown := strings.Count(got, "\n✗")
	if !strings.Contains(got, fmt.Sprintf("… and %d more", 50-shown)) {
		t.Errorf("%d lines shown but the count of the rest is wrong:\n%s", shown, got)
	}
	if all := fitLines("head", lines[:2], 500); strings.Contains(all, "more") || strings.Count(all, "\n") != 2 {
		t.Errorf("lines that fit were cut:\n%s", all)
	}
}
