package checks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// Runner runs a schedule's checks through hosts, judges them, compares
// them with the previous run and commits the run to the store.
type Runner struct {
	// Hosts runs the commands; *hosts.Fleet is one.
	Hosts hosts.Runner
	// Resolver resolves each check's targets; *hosts.Inventory is one.
	Resolver Resolver
	// Policy is asked again before each command runs, so a config that
	// changed under the bot still never runs what needs approval.
	Policy Policy
	// Store keeps the runs; the store's Checks sub-store is one.
	Store RunStore
	// Limit is how many commands run at once (default hosts.DefaultConcurrency).
	Limit int
	// Metrics, if set, counts runs and failures.
	Metrics *Metrics
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu   sync.Mutex
	last map[string]CheckRun // each schedule's last committed run
}

// job is one check on one host.
type job struct {
	check Check
	host  hosts.Host
}

// Run runs checks (those named by s, in s's order) and commits the run.
// The report is returned only once the run is in the store.
func (r *Runner) Run(ctx context.Context, s Schedule, checks []Check) (Report, error) {
	started := r.now()
	jobs, results := r.plan(checks)
	r.execute(ctx, jobs, results)
	ended := r.now()
	if ctx.Err() != nil { // cut short (e.g. shutdown): not a judgement of the fleet
		return Report{}, fmt.Errorf("checks: %s: the run was cancelled: %w", s.Name, context.Cause(ctx))
	}
	prev, err := r.previous(ctx, s.Name)
	if err != nil {
		return Report{}, fmt.Errorf("checks: %s: read the previous run: %w", s.Name, err)
	}
	rep := newReport(s, checks, started, results, prev)
	rep.Took = ended.Sub(started)
	run, err := r.Store.SaveCheckRun(context.WithoutCancel(ctx), rep.storeRun(ended))
	if err != nil {
		return Report{}, fmt.Errorf("checks: %s: save the run: %w", s.Name, err)
	}
	rep.RunID = run.ID
	r.remember(run)
	r.Metrics.observe(rep, ended)
	return rep, nil
}

// previous is the schedule's last run: the one this Runner committed if
// it is still the latest in the store (one cheap query), else read back.
func (r *Runner) previous(ctx context.Context, schedule string) ([]CheckRun, error) {
	latest, err := r.Store.LastCheckRunStart(ctx, schedule)
	if err != nil || latest.IsZero() {
		return nil, err
	}
	r.mu.Lock()
	cached, ok := r.last[schedule]
	r.mu.Unlock()
	if ok && cached.StartedAt.UnixMilli() == latest.UnixMilli() {
		return []CheckRun{cached}, nil
	}
	return r.Store.LastCheckRuns(ctx, schedule, 1)
}

func (r *Runner) remember(run CheckRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]CheckRun{}
	}
	r.last[run.Schedule] = run
}

// plan resolves each check's targets into jobs. A target that does not
// resolve, or a command the policy does not allow on a host, is judged at
// once as a failure that says why; nothing runs for it.
func (r *Runner) plan(checks []Check) ([]job, []Result) {
	var jobs []job
	var results []Result
	for _, c := range checks {
		list, err := r.Resolver.Resolve(c.Targets)
		if err != nil {
			results = append(results, Result{Host: c.Targets, Check: c.Name, Status: StatusFail, Detail: "targets do not resolve: " + trimHosts(err)})
			continue
		}
		for _, h := range list {
			if ok, why := r.Policy.Allowed(h, c.Command); !ok {
				results = append(results, Result{Host: h.Name, Check: c.Name, Status: StatusFail, Detail: "not run: it needs approval (" + why + ")"})
				continue
			}
			jobs = append(jobs, job{check: c, host: h})
			results = append(results, Result{})
		}
	}
	return jobs, results
}

// execute runs the jobs in a bounded pool and fills the empty results in
// order.
func (r *Runner) execute(ctx context.Context, jobs []job, results []Result) {
	slots := make([]int, 0, len(jobs)) // indexes of results awaiting a job
	for i, res := range results {
		if res.Check == "" {
			slots = append(slots, i)
		}
	}
	limit := r.Limit
	if limit <= 0 {
		limit = hosts.DefaultConcurrency
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(limit, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				results[slots[i]] = r.runOne(ctx, jobs[i])
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
}

func (r *Runner) runOne(ctx context.Context, j job) Result {
	hr := hosts.HostResult{Host: j.host}
	if ctx.Err() != nil {
		hr.Err = context.Cause(ctx)
	} else {
		hr.Result, hr.Err = r.Hosts.Run(ctx, j.host, j.check.Command, unattended(r.Policy, j.host, j.check.Command,
			hosts.Options{Timeout: j.check.Timeout, OutputLimit: 64 << 10}), nil)
	}
	return Judge(j.check, hr)
}

func (r *Runner) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func trimHosts(err error) string {
	const p = "hosts: "
	if s := err.Error(); len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return err.Error()
}
