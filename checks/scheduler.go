package checks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Scheduler runs each schedule on its cron: runs of one schedule never
// overlap, a run is committed before anything is posted, a panic in a run
// is logged and the next run happens, and a run missed while the bot was
// down is made up once at start.
type Scheduler struct {
	runner    *Runner
	publisher *Publisher
	log       *slog.Logger
	cron      *cron.Cron
	schedules map[string]Schedule
	order     []string
	specs     map[string]cron.Schedule
	checks    map[string]Check
	locks     map[string]chan struct{} // one token per schedule: who holds it runs
	entries   map[string]cron.EntryID

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup // catch-up runs
	stopOnce sync.Once
	// afterRun, if set, is called when a scheduled run is done (tests).
	afterRun func(name string, rep Report, err error)
}

// NewScheduler prepares the schedules of cfg, which must be valid
// (Config.Validate). Nothing runs before Start.
func NewScheduler(cfg Config, r *Runner, p *Publisher, log *slog.Logger) (*Scheduler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{runner: r, publisher: p, log: log, schedules: map[string]Schedule{}, specs: map[string]cron.Schedule{},
		checks: map[string]Check{}, locks: map[string]chan struct{}{}, entries: map[string]cron.EntryID{}}
	for _, c := range cfg.Checks {
		s.checks[c.Name] = c
	}
	for _, sc := range cfg.Schedules {
		spec, err := ParseCron(sc.Cron)
		if err != nil {
			return nil, fmt.Errorf("checks: schedule %q: cron %s", sc.Name, err)
		}
		s.schedules[sc.Name], s.specs[sc.Name] = sc, spec
		s.order = append(s.order, sc.Name)
		s.locks[sc.Name] = make(chan struct{}, 1)
	}
	cl := cronLog{log}
	// cron.New alone does not recover panics, despite its comment. The
	// order matters: SkipIfStillRunning outside Recover. The other way
	// round a panic unwinds through SkipIfStillRunning before it gives its
	// token back, and every later tick of that schedule is skipped.
	s.cron = cron.New(cron.WithParser(parser), cron.WithLogger(cl),
		cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl)))
	return s, nil
}

// Start schedules every schedule, makes up once each schedule whose last
// run was missed (read from the store), and starts the clock. Runs end
// when ctx ends or at Stop. Call it once.
func (s *Scheduler) Start(ctx context.Context) error {
	s.ctx, s.cancel = context.WithCancel(ctx)
	for _, name := range s.order {
		s.entries[name] = s.cron.Schedule(s.specs[name], cron.FuncJob(func() { s.scheduled(name) }))
	}
	now := time.Now()
	for _, name := range s.order {
		last, err := s.runner.Store.LastCheckRunStart(ctx, name)
		if err != nil {
			return fmt.Errorf("checks: read the last run of %s: %w", name, err)
		}
		if !last.IsZero() && !s.specs[name].Next(last).After(now) {
			job := s.cron.Entry(s.entries[name]).WrappedJob // recovered, and skipped if a tick runs it
			s.wg.Go(job.Run)
		}
	}
	s.cron.Start()
	return nil
}

// Stop stops the clock, cancels running runs and waits for them. Safe to
// call twice.
func (s *Scheduler) Stop() {
	s.stopOnce.Do(func() {
		if s.cancel != nil {
			s.cancel()
		}
		<-s.cron.Stop().Done()
		s.wg.Wait()
	})
}

// scheduled is one cron tick of a schedule: it runs unless a run of the
// schedule is under way (e.g. started by RunNow), then posts the report.
func (s *Scheduler) scheduled(name string) {
	select {
	case s.locks[name] <- struct{}{}:
	default:
		s.log.Info("checks: a run is still under way; this tick is skipped", "schedule", name)
		return
	}
	defer func() { <-s.locks[name] }()
	rep, err := s.run(s.ctx, s.schedules[name])
	if err == nil {
		err = s.publisher.Publish(s.ctx, s.schedules[name], rep)
	}
	switch {
	case err != nil && s.ctx.Err() != nil:
		s.log.Info("checks: a run under way was stopped at shutdown; it is not recorded", "schedule", name)
	case err != nil:
		s.log.Error("checks: scheduled run", "schedule", name, "err", err)
	}
	if s.afterRun != nil {
		s.afterRun(name, rep, err)
	}
}

// RunNow runs a schedule at once (e.g. `health NAME`) and returns its
// report, committed but not posted: the caller shows it where it was
// asked. It waits for a run of the same schedule that is under way.
func (s *Scheduler) RunNow(ctx context.Context, name string) (Report, error) {
	sc, ok := s.schedules[name]
	if !ok {
		return Report{}, fmt.Errorf("there is no schedule %q (schedules: %s)", name, strings.Join(s.Names(), ", "))
	}
	select {
	case s.locks[name] <- struct{}{}:
	case <-ctx.Done():
		return Report{}, context.Cause(ctx)
	}
	defer func() { <-s.locks[name] }()
	return s.run(ctx, sc)
}

// run runs the schedule's checks and commits the run.
func (s *Scheduler) run(ctx context.Context, sc Schedule) (Report, error) {
	checks := make([]Check, 0, len(sc.Checks))
	for _, n := range sc.Checks {
		c, ok := s.checks[n]
		if !ok {
			return Report{}, fmt.Errorf("checks: schedule %s names %q, which is not a check", sc.Name, n)
		}
		checks = append(checks, c)
	}
	return s.runner.Run(ctx, sc, checks)
}

// Latest is the schedule's last report, rebuilt from the store (see
// LatestReport).
func (s *Scheduler) Latest(ctx context.Context, name string) (Report, error) {
	sc, ok := s.schedules[name]
	if !ok {
		return Report{}, fmt.Errorf("there is no schedule %q (schedules: %s)", name, strings.Join(s.Names(), ", "))
	}
	return LatestReport(ctx, s.runner.Store, sc)
}

// Schedule returns the named schedule as configured.
func (s *Scheduler) Schedule(name string) (Schedule, bool) {
	sc, ok := s.schedules[name]
	return sc, ok
}

// Names are the schedules' names, in config order.
func (s *Scheduler) Names() []string { return slices.Clone(s.order) }

// Next is when a schedule runs next (zero before Start or for an unknown
// name).
func (s *Scheduler) Next(name string) time.Time {
	id, ok := s.entries[name]
	if !ok {
		return time.Time{}
	}
	return s.cron.Entry(id).Next
}

// cronLog sends cron's log to slog: its chatter at debug level, a
// recovered panic as an error.
type cronLog struct{ l *slog.Logger }

func (c cronLog) Info(msg string, kv ...any) {
	if msg == "skip" {
		c.l.Info("checks: a run of the schedule is still under way; this tick is skipped")
		return
	}
	c.l.Debug("cron: "+msg, kv...)
}

func (c cronLog) Error(err error, msg string, kv ...any) {
	if msg == "panic" {
		msg = "a scheduled run panicked; the next run goes ahead"
	}
	c.l.Error("checks: "+msg, append(kv, "err", err)...)
}

var _ cron.Logger = cronLog{}
