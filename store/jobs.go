package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// Jobs is the jobs aggregate: background jobs and the commands running
// now (for the `ps` list and to end them).
type Jobs struct{ db *Store }

var _ hosts.JobStore = (*Jobs)(nil)

const jobCols = `id, coalesce(session_id, 0), host, command, requester, state, exit_code, output_tail, started_at, ended_at`

// CreateJob records a job as running and audits its start.
func (s *Jobs) CreateJob(ctx context.Context, j hosts.Job) (hosts.Job, error) {
	j.State = hosts.JobRunning
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		j.StartedAt = time.UnixMilli(now).UTC()
		res, err := tx.ExecContext(ctx, `INSERT INTO jobs (session_id, host, command, requester, state, started_at)
			VALUES (?, ?, ?, ?, 'running', ?)`, nullID(j.SessionID), j.Host, j.Command, j.Requester, now)
		if err != nil {
			return err
		}
		if j.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return appendAudit(ctx, tx, now, j.Requester, "job.start", fmt.Sprintf("job:%d", j.ID),
			map[string]any{"host": j.Host, "command": j.Command})
	})
	return j, wrap("create job", err)
}

// FinishJob moves a running job to its final state and, in the same
// transaction, writes the notification that reports it. won is false when
// the job had already ended (nothing is written then).
func (s *Jobs) FinishJob(ctx context.Context, id int64, state hosts.JobState, exitCode *int, outputTail, note string) (won bool, err error) {
	if state == hosts.JobRunning {
		return false, fmt.Errorf("store: finish job: running is not a final state")
	}
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		var ok bool
		ok, err = finishJob(ctx, tx, s.db.now(), id, state, exitCode, outputTail, note)
		won = ok
		return err
	})
	return won, wrap("finish job", err)
}

func finishJob(ctx context.Context, tx *sql.Tx, now, id int64, state hosts.JobState, exitCode *int, tail, note string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, exit_code = ?, output_tail = ?, ended_at = ?
		WHERE id = ? AND state = 'running'`, string(state), exitCode, tail, now, id)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO notifications (job_id, session_id, text, created_at)
		SELECT id, session_id, ?, ? FROM jobs WHERE id = ?`, note, now, id); err != nil {
		return false, err
	}
	detail := map[string]any{"state": state}
	if exitCode != nil {
		detail["exit_code"] = *exitCode
	}
	return true, appendAudit(ctx, tx, now, "opsbot", "job."+string(state), fmt.Sprintf("job:%d", id), detail)
}

// InterruptRunningJobs marks every job left running by a previous process
// as interrupted, with a notification each; they are never re-run.
func (s *Jobs) InterruptRunningJobs(ctx context.Context) ([]hosts.Job, error) {
	var jobs []hosts.Job
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if jobs, err = queryJobs(ctx, tx, `WHERE state = 'running' ORDER BY id`); err != nil {
			return err
		}
		now := s.db.now()
		for i := range jobs {
			note := fmt.Sprintf("job %d (`%s` on %s) was interrupted by a restart of opsbot; it was not re-run", jobs[i].ID, jobs[i].Command, jobs[i].Host)
			if _, err := finishJob(ctx, tx, now, jobs[i].ID, hosts.JobInterrupted, nil, jobs[i].OutputTail, note); err != nil {
				return err
			}
			jobs[i].State, jobs[i].EndedAt = hosts.JobInterrupted, time.UnixMilli(now).UTC()
		}
		return nil
	})
	return jobs, wrap("interrupt running jobs", err)
}

// SetJobOutput replaces the kept output tail of a running job.
func (s *Jobs) SetJobOutput(ctx context.Context, id int64, tail string) error {
	return wrap("set job output", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET output_tail = ? WHERE id = ? AND state = 'running'`, tail, id)
		return err
	}))
}

// Job returns one job.
func (s *Jobs) Job(ctx context.Context, id int64) (hosts.Job, error) {
	jobs, err := queryJobs(ctx, s.db.read, `WHERE id = ?`, id)
	if err == nil && len(jobs) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return hosts.Job{}, wrap(fmt.Sprintf("job %d", id), err)
	}
	return jobs[0], nil
}

// Jobs lists a session's jobs, newest first; sessionID 0 lists all.
func (s *Jobs) Jobs(ctx context.Context, sessionID int64, limit int) ([]hosts.Job, error) {
	jobs, err := queryJobs(ctx, s.db.read, `WHERE (? = 0 OR session_id = ?) ORDER BY id DESC LIMIT ?`, sessionID, sessionID, limit)
	return jobs, wrap("jobs", err)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryJobs(ctx context.Context, q querier, where string, args ...any) ([]hosts.Job, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hosts.Job
	for rows.Next() {
		var j hosts.Job
		var code sql.NullInt64
		var started, ended sql.NullInt64
		if err := rows.Scan(&j.ID, &j.SessionID, &j.Host, &j.Command, &j.Requester, &j.State, &code, &j.OutputTail, &started, &ended); err != nil {
			return nil, err
		}
		if code.Valid {
			c := int(code.Int64)
			j.ExitCode = &c
		}
		j.StartedAt, j.EndedAt = fromMS(started), fromMS(ended)
		out = append(out, j)
	}
	return out, rows.Err()
}
