package checks

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// schedEnv is a scheduler over a fake fleet and a real store, with every
// finished scheduled run recorded. Build it inside the synctest bubble:
// cron.New must be called there, or the test hangs.
type schedEnv struct {
	store  TestStore
	poster *fakePoster
	log    *logBuffer
	sched  *Scheduler
	mu     sync.Mutex
	runs   []time.Time // each finished scheduled run's start
}

func newSchedEnv(t *testing.T, st TestStore, cron string, run hosts.RunnerFunc) *schedEnv {
	t.Helper()
	if run == nil {
		run = func(context.Context, hosts.Host, string, hosts.Options, func(hosts.Chunk)) (hosts.Result, error) {
			return hosts.Result{Output: []byte("42")}, nil
		}
	}
	e := &schedEnv{store: st, poster: &fakePoster{max: 2000}, log: &logBuffer{}}
	cfg := Config{
		Checks:    []Check{{Name: "disk", Targets: "group:all", Command: "df", Expect: Expect{FailAbove: ptr(90.0)}}},
		Schedules: []Schedule{{Name: "s", Cron: cron, Checks: []string{"disk"}, PostTo: []Destination{{"fake", "ops"}}, Post: PostAlways}},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Hosts: run, Resolver: namedHosts("web-01", "web-02"), Policy: allowAll, Store: st}
	var err error
	e.sched, err = NewScheduler(cfg, r, &Publisher{Store: st, Posters: postersOf(e.poster)}, e.log.logger())
	if err != nil {
		t.Fatal(err)
	}
	e.sched.afterRun = func(_ string, rep Report, err error) {
		if err != nil && !errors.Is(err, context.Canceled) { // Stop cancels a run under way
			t.Errorf("scheduled run: %v", err)
		}
		e.mu.Lock()
		e.runs = append(e.runs, rep.At)
		e.mu.Unlock()
	}
	return e
}

func (e *schedEnv) start(t *testing.T) {
	t.Helper()
	if err := e.sched.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.sched.Stop)
}

// ran returns the starts of the runs so far, once every goroutine of the
// bubble is idle.
func (e *schedEnv) ran() []time.Time {
	synctest.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Time(nil), e.runs...)
}

// The bubble's clock starts at 2000-01-01 00:00 UTC, a Saturday.

func TestSchedulerEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, openStore(t), "@every 15m", nil)
		e.start(t)
		time.Sleep(time.Hour + time.Second)
		runs := e.ran()
		if len(runs) != 4 {
			t.Fatalf("%d runs in an hour of @every 15m; want 4: %v", len(runs), runs)
		}
		for i, at := range runs {
			if want := time.Duration(i+1) * 15 * time.Minute; at.Sub(runs[0].Add(-15*time.Minute)) != want {
				t.Errorf("run %d at %v; want 15 minutes apart", i, at)
			}
		}
	})
}

func TestSchedulerFiveFields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, openStore(t), "CRON_TZ=UTC 0 9 * * 1-5", nil)
		e.start(t)
		time.Sleep(7 * 24 * time.Hour)
		runs := e.ran()
		if len(runs) != 5 {
			t.Fatalf("%d runs in a week of weekdays at 09:00; want 5: %v", len(runs), runs)
		}
		for i, at := range runs {
			want := time.Date(2000, 1, 3+i, 9, 0, 0, 0, time.UTC) // Mon 3 … Fri 7
			if !at.Equal(want) {
				t.Errorf("run %d at %v; want %v", i, at.UTC(), want)
			}
		}
		if n := len(e.poster.posts); n < 5 {
			t.Errorf("%d messages posted for 5 runs with post: always", n)
		}
	})
}

// TestSchedulerZoneAcrossDST: 09:00 in Berlin is 08:00 UTC before the
// spring change (2000-03-26) and 07:00 UTC from that day on.
func TestSchedulerZoneAcrossDST(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, openStore(t), "CRON_TZ=Europe/Berlin 0 9 * * *", nil)
		e.start(t)
		time.Sleep(time.Until(time.Date(2000, 3, 28, 0, 0, 0, 0, time.UTC)))
		runs := e.ran()
		want := []time.Time{
			time.Date(2000, 3, 25, 8, 0, 0, 0, time.UTC),
			time.Date(2000, 3, 26, 7, 0, 0, 0, time.UTC),
			time.Date(2000, 3, 27, 7, 0, 0, 0, time.UTC),
		}
		if len(runs) < 3 {
			t.Fatalf("%d runs", len(runs))
		}
		for i, at := range runs[len(runs)-3:] {
			if !at.Equal(want[i]) {
				t.Errorf("run around the DST change at %v; want %v", at.UTC(), want[i])
			}
		}
		if len(runs) != 87 { // Jan 1 … Mar 27, one a day
			t.Errorf("%d runs from Jan 1 to Mar 27; want 87", len(runs))
		}
	})
}

func TestSchedulerSkipsTicksWhileARunIsUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, peak, calls atomic.Int32
		slow := func(ctx context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
			calls.Add(1)
			n := running.Add(1)
			defer running.Add(-1)
			if n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(150 * time.Second) // past two more ticks
			return hosts.Result{Output: []byte("42")}, nil
		}
		e := newSchedEnv(t, openStore(t), "@every 1m", slow)
		e.start(t)
		time.Sleep(4*time.Minute + 30*time.Second)
		runs := e.ran()
		// 1m: run until 3m30 (ticks at 2m and 3m skipped); 4m: run until 6m30.
		if len(runs) != 1 || calls.Load() != 4 {
			t.Fatalf("%d runs finished, %d commands started by 4m30; want 1 finished and 2 runs × 2 hosts started", len(runs), calls.Load())
		}
		if peak.Load() > 2 {
			t.Errorf("%d commands at once: two runs overlapped", peak.Load())
		}
		if !strings.Contains(e.log.String(), "skip") {
			t.Errorf("skipped ticks were not logged:\n%s", e.log.String())
		}
	})
}

func TestSchedulerRecoversAPanicAndCommitsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t)
		e := newSchedEnv(t, st, "@every 1m", nil)
		var posts atomic.Int32
		e.poster.PostFunc = func(string, string, connectors.Message) {
			if posts.Add(1) == 1 {
				panic("poster blew up")
			}
		}
		e.start(t)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		saved, err := st.LastCheckRuns(bg, "s", 5)
		if err != nil || len(saved) != 1 {
			t.Fatalf("after a run that panicked while posting, the store has %d runs (%v); want it committed before posting", len(saved), err)
		}
		if !strings.Contains(e.log.String(), "panicked") || !strings.Contains(e.log.String(), "poster blew up") {
			t.Errorf("the panic was not logged:\n%s", e.log.String())
		}
		time.Sleep(time.Minute)
		if runs := e.ran(); len(runs) != 1 {
			t.Errorf("%d runs finished after the panic; want the next tick to run", len(runs))
		}
	})
}

// TestSchedulerCatchesUpOnceAfterRestart: runs missed while the bot was
// down are made up by one run at start, and a restart right after makes up
// nothing more.
func TestSchedulerCatchesUpOnceAfterRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t)
		e := newSchedEnv(t, st, "0 * * * *", nil)
		e.start(t)
		if runs := e.ran(); len(runs) != 0 {
			t.Fatalf("a schedule that never ran ran %d times at start", len(runs))
		}
		time.Sleep(time.Hour + time.Minute) // 01:01: one run at 01:00
		e.sched.Stop()
		if runs := e.ran(); len(runs) != 1 {
			t.Fatalf("%d runs by 01:01; want 1", len(runs))
		}

		time.Sleep(5 * time.Hour) // down until 06:01: 02:00 … 06:00 missed
		e2 := newSchedEnv(t, st, "0 * * * *", nil)
		e2.start(t)
		runs := e2.ran()
		if len(runs) != 1 || !runs[0].Equal(time.Date(2000, 1, 1, 6, 1, 0, 0, time.UTC)) {
			t.Fatalf("catch-up runs at start: %v; want exactly one, at once", runs)
		}
		e2.sched.Stop()

		time.Sleep(time.Minute) // restart at 06:02: the catch-up counts as the last run
		e3 := newSchedEnv(t, st, "0 * * * *", nil)
		e3.start(t)
		if runs := e3.ran(); len(runs) != 0 {
			t.Fatalf("a second restart made up %d runs; want none", len(runs))
		}
		time.Sleep(time.Hour)
		if runs := e3.ran(); len(runs) != 1 || runs[0].Hour() != 7 || runs[0].Minute() != 0 {
			t.Errorf("after the restart: %v; want the 07:00 run", runs)
		}
	})
}
