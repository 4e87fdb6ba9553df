package store

import (
	"context"
	"database/sql"
	"time"
)

// CheckRun is one run of a scheduled health check, across its hosts.
type CheckRun struct {
	ID        int64
	Schedule  string
	StartedAt time.Time
	EndedAt   time.Time
	Results   []CheckResult
}

// CheckResult is one check on one host.
type CheckResult struct {
	Host     string
	Check    string
	OK       bool
	Output   string
	Duration time.Duration
}

// SaveCheckRun stores a run and all its results in one transaction.
func (s *Store) SaveCheckRun(ctx context.Context, run CheckRun) (CheckRun, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO check_runs (schedule, started_at, ended_at) VALUES (?, ?, ?)`,
			run.Schedule, run.StartedAt.UnixMilli(), run.EndedAt.UnixMilli())
		if err != nil {
			return err
		}
		if run.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO check_results (run_id, host, check_name, ok, output, duration_ms) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range run.Results {
			if _, err := stmt.ExecContext(ctx, run.ID, r.Host, r.Check, r.OK, r.Output, r.Duration.Milliseconds()); err != nil {
				return err
			}
		}
		return nil
	})
	return run, wrap("save check run", err)
}

// LastCheckRuns returns a schedule's most recent runs with their results,
// newest first.
func (s *Store) LastCheckRuns(ctx context.Context, schedule string, limit int) ([]CheckRun, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, schedule, started_at, ended_at FROM check_runs
		WHERE schedule = ? ORDER BY id DESC LIMIT ?`, schedule, limit)
	if err != nil {
		return nil, wrap("last check runs", err)
	}
	var runs []CheckRun
	for rows.Next() {
		var r CheckRun
		var started, ended sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Schedule, &started, &ended); err != nil {
			rows.Close()
			return nil, wrap("last check runs", err)
		}
		r.StartedAt, r.EndedAt = fromMS(started), fromMS(ended)
		runs = append(runs, r)
	}
	rows.Close()
	for i := range runs {
		if runs[i].Results, err = s.checkResults(ctx, runs[i].ID); err != nil {
			return nil, wrap("last check runs", err)
		}
	}
	return runs, nil
}

func (s *Store) checkResults(ctx context.Context, runID int64) ([]CheckResult, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT host, check_name, ok, output, duration_ms FROM check_results
		WHERE run_id = ? ORDER BY host, check_name`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CheckResult
	for rows.Next() {
		var r CheckResult
		var dur int64
		if err := rows.Scan(&r.Host, &r.Check, &r.OK, &r.Output, &dur); err != nil {
			return nil, err
		}
		r.Duration = time.Duration(dur) * time.Millisecond
		out = append(out, r)
	}
	return out, rows.Err()
}
