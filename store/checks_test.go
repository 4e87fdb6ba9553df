package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/opsbot/opsbot/checks"
)

func TestCheckResultsKeepJudgement(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	start := clock.Now()
	since := start.Add(-26 * time.Hour)
	run := checks.CheckRun{Schedule: "morning", StartedAt: start, EndedAt: start.Add(time.Second), Results: []checks.CheckResult{
		{Host: "web-1", Check: "disk", Status: "fail", Value: 93.5, HasValue: true, Output: "93", Detail: "93 is above 90", Since: since},
		{Host: "web-2", Check: "nginx", OK: true, Status: "ok"},
	}}
	if _, err := s.Checks().SaveCheckRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Checks().LastCheckRuns(ctx, "morning", 1)
	if err != nil || len(runs) != 1 || len(runs[0].Results) != 2 {
		t.Fatalf("LastCheckRuns = %+v, %v", runs, err)
	}
	got := runs[0].Results[0]
	if got.Status != "fail" || !got.HasValue || got.Value != 93.5 || got.Detail != "93 is above 90" || !got.Since.Equal(since) {
		t.Errorf("result read back = %+v", got)
	}
	if ok := runs[0].Results[1]; ok.HasValue || !ok.Since.IsZero() || ok.Status != "ok" {
		t.Errorf("a result without value or since read back as %+v", ok)
	}
}

func TestLastCheckRunStart(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	if got, err := s.Checks().LastCheckRunStart(ctx, "morning"); err != nil || !got.IsZero() {
		t.Fatalf("never ran: LastCheckRunStart = %v, %v; want zero", got, err)
	}
	first := clock.Now()
	for _, at := range []time.Time{first, first.Add(time.Hour)} {
		if _, err := s.Checks().SaveCheckRun(ctx, checks.CheckRun{Schedule: "morning", StartedAt: at, EndedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	s.Checks().SaveCheckRun(ctx, checks.CheckRun{Schedule: "other", StartedAt: first.Add(5 * time.Hour), EndedAt: first})
	if got, err := s.Checks().LastCheckRunStart(ctx, "morning"); err != nil || !got.Equal(first.Add(time.Hour)) {
		t.Errorf("LastCheckRunStart = %v, %v; want %v", got, err, first.Add(time.Hour))
	}
}

func TestCheckPostPerScheduleChannelAndDay(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	if _, err := s.Checks().CheckPostFor(ctx, "morning", "slack", "C1", "2026-11-22"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no post yet: err = %v; want ErrNotFound", err)
	}
	p := checks.CheckPost{Schedule: "morning", Platform: "slack", Channel: "C1", Day: "2026-11-22", MessageID: "111.1", Thread: "111.1"}
	if err := s.Checks().RecordCheckPost(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.MessageID, p.Thread = "222.2", "222.2"
	if err := s.Checks().RecordCheckPost(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := s.Checks().CheckPostFor(ctx, "morning", "slack", "C1", "2026-11-22")
	if err != nil || got.MessageID != "222.2" || got.Thread != "222.2" {
		t.Errorf("CheckPostFor = %+v, %v; want the refreshed ref", got, err)
	}
	for _, other := range [][4]string{{"evening", "slack", "C1", "2026-11-22"}, {"morning", "web", "C1", "2026-11-22"},
		{"morning", "slack", "C2", "2026-11-22"}, {"morning", "slack", "C1", "2026-11-23"}} {
		if _, err := s.Checks().CheckPostFor(ctx, other[0], other[1], other[2], other[3]); !errors.Is(err, ErrNotFound) {
			t.Errorf("CheckPostFor%v = %v; want ErrNotFound (posts are per schedule, channel and day)", other, err)
		}
	}
}
