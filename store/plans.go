package store

import (
	"context"
	"database/sql"
	"time"
)

// Plans is the record of plans (issue 31): where each was asked, how far
// opsbot got running it, and each step that started. Every change is one
// transaction with its audit row.
type Plans struct{ db *Store }

// Plans is the plans aggregate.
func (s *Store) Plans() *Plans { return &Plans{db: s} }

// PlanRecord is a plan as recorded: its approval, its thread, its state.
type PlanRecord struct {
	ApprovalID string
	SessionID  int64
	Platform   string
	Workspace  string
	Channel    string
	Thread     string
	Requester  string
	// Kind is "plan", "continue" (the rest of a halted plan) or
	// "rollback"; Parent is the plan a continue or rollback came from.
	Kind, Parent string
	// State is proposed, running, done, halted or stopped.
	State string
	// CardMessage is the id of the plan's card, edited as it runs.
	CardMessage string
	CreatedAt   time.Time
}

// PlanStepRecord is one step that started.
type PlanStepRecord struct {
	Step      int // from 0
	State     string
	ExitCode  int
	Output    string
	StartedAt time.Time
	EndedAt   time.Time
}

const planCols = `approval_id, session_id, platform, workspace, channel, thread, requester, kind, parent, state, card_message, created_at`

// CreatePlan records a proposed plan, auditing it with its hash.
func (s *Plans) CreatePlan(ctx context.Context, p PlanRecord, hash string) error {
	return wrap("create plan", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO plans (`+planCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'proposed', '', ?)`,
			p.ApprovalID, p.SessionID, p.Platform, p.Workspace, p.Channel, p.Thread, p.Requester, p.Kind, p.Parent, s.db.now())
		if err != nil {
			return err
		}
		return appendAudit(ctx, tx, s.db.now(), p.Requester, "plan.proposed", "approval:"+p.ApprovalID,
			map[string]any{"hash": hash, "kind": p.Kind, "parent": p.Parent})
	}))
}

// Plan reads one plan.
func (s *Plans) Plan(ctx context.Context, id string) (PlanRecord, error) {
	p, err := scanPlan(s.db.read.QueryRowContext(ctx, `SELECT `+planCols+` FROM plans WHERE approval_id = ?`, id))
	return p, wrap("plan "+id, err)
}

// RunningPlans lists the plans left running: after a restart, those a
// crash cut.
func (s *Plans) RunningPlans(ctx context.Context) ([]PlanRecord, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+planCols+` FROM plans WHERE state = 'running' ORDER BY created_at`)
	if err != nil {
		return nil, wrap("running plans", err)
	}
	defer rows.Close()
	var out []PlanRecord
	for rows.Next() {
		p, err := scanPlan(rows)
		if err != nil {
			return nil, wrap("running plans", err)
		}
		out = append(out, p)
	}
	return out, wrap("running plans", rows.Err())
}

// SetPlanCard records the id of the plan's card.
func (s *Plans) SetPlanCard(ctx context.Context, id, message string) error {
	return wrap("plan card", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE plans SET card_message = ? WHERE approval_id = ?`, message, id)
		return err
	}))
}

// StartPlan moves an approved plan from proposed to running, once: won
// is false when it was started already. by is who approved it.
func (s *Plans) StartPlan(ctx context.Context, id, by string) (won bool, err error) {
	return s.move(ctx, id, "proposed", "running", by, "plan.approved", nil)
}

// EndPlan moves a plan from one state to another (running to done,
// halted; halted to stopped), once, auditing action with detail.
func (s *Plans) EndPlan(ctx context.Context, id, from, to, by, action string, detail map[string]any) (won bool, err error) {
	return s.move(ctx, id, from, to, by, action, detail)
}

func (s *Plans) move(ctx context.Context, id, from, to, by, action string, detail map[string]any) (won bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE plans SET state = ? WHERE approval_id = ? AND state = ?`, to, id, from)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		won = true
		return appendAudit(ctx, tx, s.db.now(), by, action, "approval:"+id, detail)
	})
	return won, wrap("plan "+id+" to "+to, err)
}

// StartStep records that step k starts, before its command runs: won is
// false when it started before (it is never run twice).
func (s *Plans) StartStep(ctx context.Context, id string, k int, command string) (won bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO plan_steps (approval_id, step, started_at) VALUES (?, ?, ?)`, id, k, s.db.now())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		won = true
		return appendAudit(ctx, tx, s.db.now(), "opsbot", "plan.step_started", "approval:"+id,
			map[string]any{"step": k + 1, "command": command})
	})
	return won, wrap("start plan step", err)
}

// FinishStep records how step k ended: state complete or error.
func (s *Plans) FinishStep(ctx context.Context, id string, k int, state string, exit int, output string, took time.Duration) error {
	return wrap("finish plan step", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE plan_steps SET state = ?, exit_code = ?, output = ?, ended_at = ?
			WHERE approval_id = ? AND step = ? AND ended_at IS NULL`, state, exit, output, s.db.now(), id, k)
		if err != nil {
			return err
		}
		return appendAudit(ctx, tx, s.db.now(), "opsbot", "plan.step_finished", "approval:"+id,
			map[string]any{"step": k + 1, "state": state, "exit_code": exit, "duration_ms": took.Milliseconds()})
	}))
}

// VerifyStep audits the verify command of step k, run after the step's
// command succeeded and before the step is finished: part of the step,
// whose end (FinishStep) follows it.
func (s *Plans) VerifyStep(ctx context.Context, id string, k int, command string, exit int, took time.Duration) error {
	return wrap("verify plan step", s.db.tx(ctx, func(tx *sql.Tx) error {
		return appendAudit(ctx, tx, s.db.now(), "opsbot", "plan.step_verified", "approval:"+id,
			map[string]any{"step": k + 1, "verify": command, "exit_code": exit, "duration_ms": took.Milliseconds()})
	}))
}

// CutPlan halts a plan a restart cut: each step that started and did not
// end is marked cut, in one transaction with the halt; won is false when
// the plan was not running.
func (s *Plans) CutPlan(ctx context.Context, id string) (won bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE plans SET state = 'halted' WHERE approval_id = ? AND state = 'running'`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		won = true
		if _, err := tx.ExecContext(ctx, `UPDATE plan_steps SET state = 'cut', ended_at = ? WHERE approval_id = ? AND ended_at IS NULL`, s.db.now(), id); err != nil {
			return err
		}
		return appendAudit(ctx, tx, s.db.now(), "opsbot", "plan.halted", "approval:"+id, map[string]any{"why": "restart"})
	})
	return won, wrap("cut plan", err)
}

// PlanSteps lists the steps of a plan that started, in order.
func (s *Plans) PlanSteps(ctx context.Context, id string) ([]PlanStepRecord, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT step, state, coalesce(exit_code, 0), output, started_at, ended_at
		FROM plan_steps WHERE approval_id = ? ORDER BY step`, id)
	if err != nil {
		return nil, wrap("plan steps", err)
	}
	defer rows.Close()
	var out []PlanStepRecord
	for rows.Next() {
		var r PlanStepRecord
		var started, ended sql.NullInt64
		if err := rows.Scan(&r.Step, &r.State, &r.ExitCode, &r.Output, &started, &ended); err != nil {
			return nil, wrap("plan steps", err)
		}
		r.StartedAt, r.EndedAt = fromMS(started), fromMS(ended)
		out = append(out, r)
	}
	return out, wrap("plan steps", rows.Err())
}

func scanPlan(row scanner) (PlanRecord, error) {
	var p PlanRecord
	var created sql.NullInt64
	err := row.Scan(&p.ApprovalID, &p.SessionID, &p.Platform, &p.Workspace, &p.Channel, &p.Thread, &p.Requester,
		&p.Kind, &p.Parent, &p.State, &p.CardMessage, &created)
	p.CreatedAt = fromMS(created)
	return p, err
}
