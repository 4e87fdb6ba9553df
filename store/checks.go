package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/checks"
)

// Checks is the health checks aggregate: each schedule's runs with their
// results, and the message a schedule keeps in a channel for a day.
type Checks struct{ db *Store }

var (
	_ checks.RunStore  = (*Checks)(nil)
	_ checks.PostStore = (*Checks)(nil)
)

// SaveCheckRun stores a run and all its results in one transaction.
func (s *Checks) SaveCheckRun(ctx context.Context, run checks.CheckRun) (checks.CheckRun, error) {
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO check_runs (schedule, started_at, ended_at) VALUES (?, ?, ?)`,
			run.Schedule, run.StartedAt.UnixMilli(), run.EndedAt.UnixMilli())
		if err != nil {
			return err
		}
		if run.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return insertResults(ctx, tx, run)
	})
	return run, wrap("save check run", err)
}

// resultsPerInsert is how many results one INSERT carries: one statement
// per 100 rows instead of one per row cuts the cgo calls a 1,000-host
// run costs (10 parameters a row, far under SQLite's limit).
const resultsPerInsert = 100

// insertResults writes the results in multi-row INSERTs.
func insertResults(ctx context.Context, tx *sql.Tx, run checks.CheckRun) error {
	const cols = `INSERT INTO check_results
		(run_id, host, check_name, ok, output, duration_ms, status, value, detail, since) VALUES `
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	var full *sql.Stmt // the statement of a full batch, prepared once
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	for rest := run.Results; len(rest) > 0; {
		batch := rest[:min(resultsPerInsert, len(rest))]
		rest = rest[len(batch):]
		args := make([]any, 0, 10*len(batch))
		for _, r := range batch {
			args = append(args, run.ID, r.Host, r.Check, r.OK, r.Output, r.Duration.Milliseconds(), r.Status,
				sql.NullFloat64{Float64: r.Value, Valid: r.HasValue}, r.Detail,
				sql.NullInt64{Int64: r.Since.UnixMilli(), Valid: !r.Since.IsZero()})
		}
		query := cols + strings.Repeat(row+", ", len(batch)-1) + row
		var err error
		if len(batch) == resultsPerInsert {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, query); err != nil {
					return err
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, query, args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// LastCheckRuns returns a schedule's most recent runs with their results,
// newest first.
func (s *Checks) LastCheckRuns(ctx context.Context, schedule string, limit int) ([]checks.CheckRun, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, schedule, started_at, ended_at FROM check_runs
		WHERE schedule = ? ORDER BY id DESC LIMIT ?`, schedule, limit)
	if err != nil {
		return nil, wrap("last check runs", err)
	}
	var runs []checks.CheckRun
	for rows.Next() {
		var r checks.CheckRun
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

// LastCheckRunStart is when the schedule's latest run started; the zero
// time when it never ran. The scheduler's catch-up reads it at start.
func (s *Checks) LastCheckRunStart(ctx context.Context, schedule string) (time.Time, error) {
	var started sql.NullInt64
	err := s.db.read.QueryRowContext(ctx, `SELECT max(started_at) FROM check_runs WHERE schedule = ?`, schedule).Scan(&started)
	return fromMS(started), wrap("last check run start", err)
}

func (s *Checks) checkResults(ctx context.Context, runID int64) ([]checks.CheckResult, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT host, check_name, ok, output, duration_ms, status, value, detail, since
		FROM check_results WHERE run_id = ? ORDER BY host, check_name`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []checks.CheckResult
	for rows.Next() {
		var r checks.CheckResult
		var dur int64
		var value sql.NullFloat64
		var since sql.NullInt64
		if err := rows.Scan(&r.Host, &r.Check, &r.OK, &r.Output, &dur, &r.Status, &value, &r.Detail, &since); err != nil {
			return nil, err
		}
		r.Duration = time.Duration(dur) * time.Millisecond
		r.Value, r.HasValue = value.Float64, value.Valid
		r.Since = fromMS(since)
		if r.Status == "" { // a row from before statuses
			r.Status = map[bool]string{true: "ok", false: "fail"}[r.OK]
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// CheckPostFor returns the schedule's message of day in a channel, or
// an error that is both ErrNotFound and checks.ErrNoPost when none was
// posted yet.
func (s *Checks) CheckPostFor(ctx context.Context, schedule, platform, channel, day string) (checks.CheckPost, error) {
	p := checks.CheckPost{Schedule: schedule, Platform: platform, Channel: channel, Day: day}
	var updated sql.NullInt64
	err := s.db.read.QueryRowContext(ctx, `SELECT message_id, thread, updated_at FROM check_posts
		WHERE schedule = ? AND platform = ? AND channel = ? AND day = ?`, schedule, platform, channel, day).
		Scan(&p.MessageID, &p.Thread, &updated)
	p.UpdatedAt = fromMS(updated)
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("%w (%w)", ErrNotFound, checks.ErrNoPost)
	}
	return p, wrap("check post", err)
}

// RecordCheckPost records (or refreshes) the schedule's message of the day
// in a channel.
func (s *Checks) RecordCheckPost(ctx context.Context, p checks.CheckPost) error {
	return wrap("record check post", s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		_, err := tx.ExecContext(ctx, `INSERT INTO check_posts (schedule, platform, channel, day, message_id, thread, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (schedule, platform, channel, day) DO UPDATE SET message_id = excluded.message_id,
				thread = excluded.thread, updated_at = excluded.updated_at`,
			p.Schedule, p.Platform, p.Channel, p.Day, p.MessageID, p.Thread, now, now)
		return err
	}))
}
