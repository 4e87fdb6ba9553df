package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// Approvals is the approvals aggregate: requests and their votes, the
// one-shot use of an approved request, the cards that show them and the
// follow-ups that resume a turn once decided.
type Approvals struct{ db *Store }

var _ approvals.Store = (*Approvals)(nil)

const approvalCols = `id, hash, coalesce(session_id, 0), platform, channel, host, command, cwd, requester, reasons,
	quorum, state, created_at, expires_at, decided_at, decided_by`

// CreateApproval stores a pending request and audits it. An empty ID gets a
// random one; an empty CreatedAt is now.
func (s *Approvals) CreateApproval(ctx context.Context, a approvals.Approval) (approvals.Approval, error) {
	if a.ID == "" {
		a.ID = newID()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.db.Now()
	}
	if a.Quorum < 1 {
		a.Quorum = 1
	}
	if a.Reasons == nil {
		a.Reasons = []string{}
	}
	a.State = approvals.ApprovalPending
	reasons, _ := json.Marshal(a.Reasons)
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO approvals (id, hash, session_id, platform, channel, host, command, cwd,
			requester, reasons, quorum, state, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
			a.ID, a.Hash, nullID(a.SessionID), a.Platform, a.Channel, a.Host, a.Command, a.Cwd, a.Requester,
			string(reasons), a.Quorum, a.CreatedAt.UnixMilli(), a.ExpiresAt.UnixMilli())
		if err != nil {
			return err
		}
		return appendAudit(ctx, tx, s.db.now(), a.Requester, "approval.request", "approval:"+a.ID,
			map[string]any{"host": a.Host, "command": a.Command, "cwd": a.Cwd, "expires_at": a.ExpiresAt.UTC()})
	})
	a.CreatedAt, a.ExpiresAt = a.CreatedAt.Round(time.Millisecond).UTC(), a.ExpiresAt.Round(time.Millisecond).UTC()
	return a, wrap("create approval", err)
}

// Approval returns one request.
func (s *Approvals) Approval(ctx context.Context, id string) (approvals.Approval, error) {
	a, err := scanApproval(s.db.read.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	return a, wrap("approval "+id, err)
}

// PendingApprovals lists the undecided requests, oldest first.
func (s *Approvals) PendingApprovals(ctx context.Context) ([]approvals.Approval, error) {
	return s.list(ctx, "pending approvals", `state = 'pending' ORDER BY created_at, id`)
}

// list reads the requests the WHERE clause where (with its ORDER BY and
// LIMIT) selects, with args; what names the list in an error.
func (s *Approvals) list(ctx context.Context, what, where string, args ...any) ([]approvals.Approval, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE `+where, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	defer rows.Close()
	var out []approvals.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, wrap(what, err)
		}
		out = append(out, a)
	}
	return out, wrap(what, rows.Err())
}

// RecordVote counts a vote on a pending, unexpired request, once per voter,
// and returns the tally after it. When the votes decide the request — a
// deny, or as many approvals as its quorum — it is decided in the same
// transaction: a crash can never keep a vote and lose its decision (which
// left the request pending and its voter told "you have already voted").
// A vote repeated on a request its votes already decide completes that
// decision. Who may vote is the caller's rule; this method only guarantees
// that a vote is counted at most once and never on a decided or expired
// request.
func (s *Approvals) RecordVote(ctx context.Context, approvalID, voter, vote string) (approvals.VoteTally, error) {
	if vote != "approve" && vote != "deny" {
		return approvals.VoteTally{}, fmt.Errorf("store: record vote: %q is not a vote (approve or deny)", vote)
	}
	var t approvals.VoteTally
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO votes (approval_id, voter, vote, created_at)
			SELECT id, ?, ?, ? FROM approvals WHERE id = ? AND state = 'pending' AND expires_at > ?
			ON CONFLICT (approval_id, voter) DO NOTHING`, voter, vote, now, approvalID, now)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		t.Recorded = n == 1
		if t.Recorded {
			if err := appendAudit(ctx, tx, now, voter, "approval.vote", "approval:"+approvalID, map[string]any{"vote": vote}); err != nil {
				return err
			}
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE vote = 'approve'), count(*) FILTER (WHERE vote = 'deny')
			FROM votes WHERE approval_id = ?`, approvalID).Scan(&t.Approvals, &t.Denies); err != nil {
			return err
		}
		if t.Approval, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, approvalID)); err != nil {
			return err
		}
		return s.decideByVotes(ctx, tx, now, voter, &t)
	})
	return t, wrap("record vote", err)
}

// decideByVotes decides a pending, unexpired request whose votes call for
// it, within the vote's transaction.
func (s *Approvals) decideByVotes(ctx context.Context, tx *sql.Tx, now int64, voter string, t *approvals.VoteTally) error {
	if t.Approval.State != approvals.ApprovalPending || t.Approval.ExpiresAt.UnixMilli() <= now {
		return nil
	}
	to := approvals.ApprovalApproved
	switch {
	case t.Denies > 0:
		to = approvals.ApprovalDenied
	case t.Approvals < t.Approval.Quorum:
		return nil
	}
	res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = ?, decided_at = ?, decided_by = ?
		WHERE id = ? AND state = 'pending'`, string(to), now, voter, t.Approval.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil
	}
	t.Decided = true
	if err := appendAudit(ctx, tx, now, voter, "approval."+string(to), "approval:"+t.Approval.ID, nil); err != nil {
		return err
	}
	t.Approval, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, t.Approval.ID))
	return err
}

// DecideApproval moves a pending request to a final state with one
// conditional UPDATE, audited in the same transaction. won reports whether
// this call made the decision; either way the request as it now stands is
// returned, so a loser can say who decided. An approval is refused once the
// request has expired.
func (s *Approvals) DecideApproval(ctx context.Context, id string, to approvals.ApprovalState, by string) (won bool, a approvals.Approval, err error) {
	if to == approvals.ApprovalPending {
		return false, approvals.Approval{}, fmt.Errorf("store: decide approval: pending is not a decision")
	}
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		cond := ""
		if to == approvals.ApprovalApproved {
			cond = " AND expires_at > ?"
		}
		args := []any{string(to), now, by, id}
		if cond != "" {
			args = append(args, now)
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = ?, decided_at = ?, decided_by = ?
			WHERE id = ? AND state = 'pending'`+cond, args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if won = n == 1; won {
			if err := appendAudit(ctx, tx, now, by, "approval."+string(to), "approval:"+id, nil); err != nil {
				return err
			}
		}
		a, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
		return err
	})
	return won, a, wrap("decide approval", err)
}

// Votes lists the votes on a request in the order they came.
func (s *Approvals) Votes(ctx context.Context, approvalID string) ([]approvals.Vote, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT voter, vote, created_at FROM votes WHERE approval_id = ? ORDER BY created_at, voter`, approvalID)
	if err != nil {
		return nil, wrap("votes", err)
	}
	defer rows.Close()
	var out []approvals.Vote
	for rows.Next() {
		var v approvals.Vote
		var at sql.NullInt64
		if err := rows.Scan(&v.Voter, &v.Vote, &at); err != nil {
			return nil, wrap("votes", err)
		}
		v.At = fromMS(at)
		out = append(out, v)
	}
	return out, wrap("votes", rows.Err())
}

func scanApproval(row scanner) (approvals.Approval, error) {
	var a approvals.Approval
	var reasons string
	var created, expires, decided sql.NullInt64
	err := row.Scan(&a.ID, &a.Hash, &a.SessionID, &a.Platform, &a.Channel, &a.Host, &a.Command, &a.Cwd, &a.Requester,
		&reasons, &a.Quorum, &a.State, &created, &expires, &decided, &a.DecidedBy)
	if err != nil {
		return a, err
	}
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = fromMS(created), fromMS(expires), fromMS(decided)
	return a, json.Unmarshal([]byte(reasons), &a.Reasons)
}

// newID is a random 128-bit identifier in hex.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// nullID stores 0 as NULL, for optional foreign keys.
func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }
