package checks

import (
	"cmp"
	"slices"
	"time"
)

// Report is one run of a schedule, judged and compared with the run
// before it. Summary and Details render it.
type Report struct {
	Schedule string
	// RunID is the run's row in the store (0 until committed).
	RunID int64
	// At is when the run started; PrevAt when the previous run started
	// (zero for a schedule's first run).
	At, PrevAt time.Time
	// Zone is the schedule's time zone, for the times the report shows.
	Zone *time.Location
	// Took is how long the run took.
	Took time.Duration
	// Checks are the check names in the schedule's order; Hosts the host
	// names in the order first met.
	Checks []string
	Hosts  []string
	// Results are every check on every host, checks in order, hosts in
	// order within each.
	Results []Result
}

// newReport judges the change of every result against the previous run.
func newReport(s Schedule, checks []Check, at time.Time, results []Result, prev []CheckRun) Report {
	rep := Report{Schedule: s.Name, At: at, Zone: zoneOf(s.Cron), Results: results}
	for _, c := range checks {
		rep.Checks = append(rep.Checks, c.Name)
	}
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Host] {
			seen[r.Host] = true
			rep.Hosts = append(rep.Hosts, r.Host)
		}
	}
	if len(prev) > 0 {
		rep.PrevAt = prev[0].StartedAt
		link(rep.Results, prev[0])
	}
	for i := range rep.Results {
		if rep.Results[i].Since.IsZero() {
			rep.Results[i].Since = at
		}
	}
	return rep
}

// link sets each result's Prev and, where the status held, its Since.
func link(results []Result, prev CheckRun) {
	byKey := make(map[[2]string]*CheckResult, len(prev.Results))
	for i := range prev.Results {
		p := &prev.Results[i]
		byKey[[2]string{p.Host, p.Check}] = p
	}
	for i := range results {
		r := &results[i]
		p, ok := byKey[[2]string{r.Host, r.Check}]
		if !ok {
			continue
		}
		r.Prev = &Result{Host: p.Host, Check: p.Check, Status: Status(p.Status), Value: p.Value, HasValue: p.HasValue,
			Output: p.Output, Detail: p.Detail, Since: p.Since}
		if r.Prev.Status == r.Status {
			r.Since = cmp.Or(p.Since, prev.StartedAt)
		}
	}
}

// storeRun is the run as the store keeps it.
func (rep Report) storeRun(ended time.Time) CheckRun {
	run := CheckRun{Schedule: rep.Schedule, StartedAt: rep.At, EndedAt: ended, Results: make([]CheckResult, len(rep.Results))}
	for i, r := range rep.Results {
		run.Results[i] = CheckResult{Host: r.Host, Check: r.Check, OK: r.Status == StatusOK, Status: string(r.Status),
			Value: r.Value, HasValue: r.HasValue, Output: r.Output, Detail: r.Detail, Since: r.Since, Duration: r.Duration}
	}
	return run
}

// Counts are how many results have each status; Unreachable counts hosts.
type Counts struct {
	OK, Warn, Fail, Unreachable int
	// NewFailures are results that turned fail, and hosts that turned
	// unreachable, since the previous run; NewWarnings are results that
	// turned warn; Recovered turned ok.
	NewFailures, NewWarnings, Recovered int
}

// Counts tallies the report.
func (rep Report) Counts() Counts {
	var c Counts
	down, newDown := map[string]bool{}, map[string]bool{} // unreachable counts hosts, not checks
	for _, r := range rep.Results {
		switch r.Status {
		case StatusOK:
			c.OK++
		case StatusWarn:
			c.Warn++
		case StatusFail:
			c.Fail++
		case StatusUnreachable:
			down[r.Host] = true
		}
		switch {
		case rep.PrevAt.IsZero():
		case r.Status == StatusUnreachable && (r.Prev == nil || !r.Prev.Status.bad()):
			newDown[r.Host] = true
		case r.Status.bad() && (r.Prev == nil || !r.Prev.Status.bad()):
			c.NewFailures++
		case r.Status == StatusWarn && (r.Prev == nil || r.Prev.Status != StatusWarn):
			c.NewWarnings++
		case r.Status == StatusOK && r.Prev != nil && r.Prev.Status != StatusOK:
			c.Recovered++
		}
	}
	c.Unreachable = len(down)
	c.NewFailures += len(newDown)
	return c
}

// Changed reports whether any result's status differs from the previous
// run (a first run counts as a change).
func (rep Report) Changed() bool {
	if rep.PrevAt.IsZero() {
		return true
	}
	for _, r := range rep.Results {
		if r.Prev == nil || r.Prev.Status != r.Status {
			return true
		}
	}
	return false
}

// Failing reports whether any check failed or any host was unreachable.
func (rep Report) Failing() bool {
	return slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Status.bad() })
}

// isNew reports whether r entered its status in this run.
func (rep Report) isNew(r Result) bool {
	return !rep.PrevAt.IsZero() && (r.Prev == nil || r.Prev.Status != r.Status)
}

// ordered returns the results of one status, new ones first, then by
// how long they have held (oldest first), host and check.
func (rep Report) ordered(s Status) []Result {
	var out []Result
	for _, r := range rep.Results {
		if r.Status == s {
			out = append(out, r)
		}
	}
	rep.sort(out)
	return out
}

// sort orders results new first, then by how long they have held (oldest
// first), host and check.
func (rep Report) sort(out []Result) {
	slices.SortStableFunc(out, func(a, b Result) int {
		if na, nb := rep.isNew(a), rep.isNew(b); na != nb {
			if na {
				return -1
			}
			return 1
		}
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Host, b.Host), cmp.Compare(a.Check, b.Check))
	})
}
