package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// The kinds of FollowUp.
const (
	// FollowUpRun is a chat `run` command: opsbot runs it once approved.
	FollowUpRun = "run"
	// FollowUpAgent is an agent's tool call: its turn resumes once decided.
	FollowUpAgent = "agent"
)

// FollowUp is what opsbot does once an approval is decided. It is written
// before the approval's card is posted, so a restart between the card and
// the decision still knows what the decision was for.
type FollowUp struct {
	ApprovalID string
	SessionID  int64
	Kind       string // FollowUpRun or FollowUpAgent
	// Target, Hosts, Command, Cwd, Timeout and Background describe a chat
	// `run`: Hosts is what Target resolved to when it was asked.
	Target     string
	Hosts      []string
	Command    string
	Cwd        string
	Timeout    time.Duration
	Background bool
	Requester  string
	CreatedAt  time.Time
	// DoneAt is when the decision was acted on; zero while open.
	DoneAt time.Time
	// State and Consumed are the approval's, read with the follow-up.
	State    approvals.ApprovalState
	Consumed bool
}

const followUpCols = `f.approval_id, f.session_id, f.kind, f.target, f.hosts, f.command, f.cwd, f.timeout_ms, f.background,
	f.requester, f.created_at, f.done_at, a.state, a.consumed_at IS NOT NULL`

// RecordFollowUp stores what to do once the approval is decided; a second
// record for the same approval (a turn re-attaching after a restart)
// changes nothing.
func (s *Approvals) RecordFollowUp(ctx context.Context, f FollowUp) error {
	hosts, _ := json.Marshal(f.Hosts)
	if f.Hosts == nil {
		hosts = []byte("[]")
	}
	return wrap("record follow-up", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO approval_followups (approval_id, session_id, kind, target, hosts, command, cwd,
			timeout_ms, background, requester, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (approval_id) DO NOTHING`,
			f.ApprovalID, f.SessionID, f.Kind, f.Target, string(hosts), f.Command, f.Cwd, f.Timeout.Milliseconds(), f.Background,
			f.Requester, s.db.now())
		return err
	}))
}

// FollowUpFor returns the follow-up of an approval; ok is false when it has
// none.
func (s *Approvals) FollowUpFor(ctx context.Context, approvalID string) (f FollowUp, ok bool, err error) {
	f, err = scanFollowUp(s.db.read.QueryRowContext(ctx, `SELECT `+followUpCols+` FROM approval_followups f
		JOIN approvals a ON a.id = f.approval_id WHERE f.approval_id = ?`, approvalID))
	if errors.Is(err, sql.ErrNoRows) {
		return FollowUp{}, false, nil
	}
	return f, err == nil, wrap("follow-up", err)
}

// FinishFollowUp marks a follow-up done; won reports whether this call did,
// so exactly one caller acts on a decision.
func (s *Approvals) FinishFollowUp(ctx context.Context, approvalID string) (won bool, err error) {
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approval_followups SET done_at = ? WHERE approval_id = ? AND done_at IS NULL`, s.db.now(), approvalID)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		won = n == 1
		return nil
	})
	return won, wrap("finish follow-up", err)
}

// DecidedFollowUps lists the open follow-ups whose approval is decided:
// decisions nobody has acted on yet (made, or expired, while no turn was
// waiting), oldest first.
func (s *Approvals) DecidedFollowUps(ctx context.Context) ([]FollowUp, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+followUpCols+` FROM approval_followups f
		JOIN approvals a ON a.id = f.approval_id WHERE f.done_at IS NULL AND a.state != 'pending' ORDER BY f.created_at, f.approval_id`)
	if err != nil {
		return nil, wrap("decided follow-ups", err)
	}
	defer rows.Close()
	var out []FollowUp
	for rows.Next() {
		f, err := scanFollowUp(rows)
		if err != nil {
			return nil, wrap("decided follow-ups", err)
		}
		out = append(out, f)
	}
	return out, wrap("decided follow-ups", rows.Err())
}

func scanFollowUp(row scanner) (FollowUp, error) {
	var f FollowUp
	var hosts string
	var timeout int64
	var created, done sql.NullInt64
	err := row.Scan(&f.ApprovalID, &f.SessionID, &f.Kind, &f.Target, &hosts, &f.Command, &f.Cwd, &timeout, &f.Background,
		&f.Requester, &created, &done, &f.State, &f.Consumed)
	if err != nil {
		return f, err
	}
	f.Timeout = time.Duration(timeout) * time.Millisecond
	f.CreatedAt, f.DoneAt = fromMS(created), fromMS(done)
	return f, json.Unmarshal([]byte(hosts), &f.Hosts)
}
