package checks

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoRuns is returned by LatestReport for a schedule that never ran.
var ErrNoRuns = errors.New("the schedule has not run yet")

// LatestReport rebuilds a schedule's last report from the store, with
// what changed against the run before it: for `health`, and for the
// agent's read-only tool ("what failed this morning?" is answered from
// the store, not by re-running).
func LatestReport(ctx context.Context, st RunHistory, s Schedule) (Report, error) {
	runs, err := st.LastCheckRuns(ctx, s.Name, 2)
	if err != nil {
		return Report{}, fmt.Errorf("checks: read the runs of %s: %w", s.Name, err)
	}
	if len(runs) == 0 {
		return Report{}, ErrNoRuns
	}
	results := make([]Result, len(runs[0].Results))
	for i, r := range runs[0].Results {
		results[i] = fromStore(r)
	}
	checks := make([]Check, len(s.Checks))
	for i, name := range s.Checks {
		checks[i] = Check{Name: name}
	}
	rep := newReport(s, checks, runs[0].StartedAt, results, runs[1:])
	rep.RunID, rep.Took = runs[0].ID, runs[0].EndedAt.Sub(runs[0].StartedAt)
	return rep, nil
}

// fromStore is a stored result as the report shows it; the unit of its
// number is read again from the output excerpt.
func fromStore(r CheckResult) Result {
	res := Result{Host: r.Host, Check: r.Check, Status: Status(r.Status), Value: r.Value, HasValue: r.HasValue,
		Output: r.Output, Detail: r.Detail, Since: r.Since, Duration: r.Duration}
	if m := numberRE.FindStringSubmatch(r.Output); m != nil && r.HasValue {
		res.Unit = m[2]
	}
	return res
}
