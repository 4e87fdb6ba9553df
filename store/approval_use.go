package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// ReusableApproval finds the newest request of the session with this hash
// that a waiter may still attach to: pending, or approved and not yet
// used — either way before its expiry, so an approval nobody used lapses
// like an unanswered request. ok is false when there is none.
func (s *Approvals) ReusableApproval(ctx context.Context, sessionID int64, hash string) (a approvals.Approval, ok bool, err error) {
	a, err = scanApproval(s.db.read.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE hash = ? AND coalesce(session_id, 0) = ? AND expires_at > ?
			AND (state = 'pending' OR (state = 'approved' AND consumed_at IS NULL))
		ORDER BY created_at DESC, id LIMIT 1`, hash, sessionID, s.db.now()))
	if err == sql.ErrNoRows {
		return approvals.Approval{}, false, nil
	}
	return a, err == nil, wrap("reusable approval", err)
}

// ConsumeApproval claims an approved request for its one run. It reports
// false when the request is not approved or was used already.
func (s *Approvals) ConsumeApproval(ctx context.Context, id, by string) (bool, error) {
	var won bool
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		now := s.db.now()
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET consumed_at = ? WHERE id = ? AND state = 'approved' AND consumed_at IS NULL`, now, id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if won = n == 1; won {
			return appendAudit(ctx, tx, now, by, "approval.used", "approval:"+id, nil)
		}
		return nil
	})
	return won, wrap("consume approval", err)
}

// SetApprovalCard records where a request's card was posted.
func (s *Approvals) SetApprovalCard(ctx context.Context, id, channel, message string) error {
	return wrap("set approval card", s.db.tx(ctx, func(tx *sql.Tx) error {
		return expectOne(tx.ExecContext(ctx, `UPDATE approvals SET card_channel = ?, card_message = ? WHERE id = ?`, channel, message, id))
	}))
}

// ApprovalCard returns where a request's card was posted ("" if nowhere).
func (s *Approvals) ApprovalCard(ctx context.Context, id string) (channel, message string, err error) {
	err = s.db.read.QueryRowContext(ctx, `SELECT card_channel, card_message FROM approvals WHERE id = ?`, id).Scan(&channel, &message)
	return channel, message, wrap("approval card", err)
}

// StaleCards lists a session's decided requests whose card still shows
// them pending.
func (s *Approvals) StaleCards(ctx context.Context, sessionID int64) ([]approvals.Approval, error) {
	return s.list(ctx, "stale cards", `session_id = ? AND state != 'pending' AND card_message != '' AND card_shown = 0 ORDER BY created_at`, sessionID)
}

// AllStaleCards lists every decided request whose card still shows it
// pending, with where the card is (channel, message), oldest first, at
// most limit.
func (s *Approvals) AllStaleCards(ctx context.Context, limit int) ([]approvals.Approval, []string, []string, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+approvalCols+`, card_channel, card_message FROM approvals
		WHERE state != 'pending' AND card_message != '' AND card_shown = 0 ORDER BY created_at LIMIT ?`, limit)
	if err != nil {
		return nil, nil, nil, wrap("stale cards", err)
	}
	defer rows.Close()
	var out []approvals.Approval
	var channels, messages []string
	for rows.Next() {
		var a approvals.Approval
		var reasons, channel, message string
		var created, expires, decided sql.NullInt64
		if err := rows.Scan(&a.ID, &a.Hash, &a.SessionID, &a.Platform, &a.Channel, &a.Host, &a.Command, &a.Cwd, &a.Requester,
			&reasons, &a.Quorum, &a.State, &created, &expires, &decided, &a.DecidedBy, &channel, &message); err != nil {
			return nil, nil, nil, wrap("stale cards", err)
		}
		a.CreatedAt, a.ExpiresAt, a.DecidedAt = fromMS(created), fromMS(expires), fromMS(decided)
		if err := json.Unmarshal([]byte(reasons), &a.Reasons); err != nil {
			return nil, nil, nil, wrap("stale cards", err)
		}
		out, channels, messages = append(out, a), append(channels, channel), append(messages, message)
	}
	return out, channels, messages, wrap("stale cards", rows.Err())
}

// MarkCardShown records that a request's card shows its decision.
func (s *Approvals) MarkCardShown(ctx context.Context, id string) error {
	return wrap("mark card shown", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE approvals SET card_shown = 1 WHERE id = ?`, id)
		return err
	}))
}

// UncardedPending lists pending requests created before before whose
// card's place was never recorded, oldest first, at most limit: a
// process died between a request and its card's post (or its record),
// so the thread may show no Approve button for it (cardplace.go).
func (s *Approvals) UncardedPending(ctx context.Context, before time.Time, limit int) ([]approvals.Approval, error) {
	return s.list(ctx, "uncarded requests", `state = 'pending' AND card_message = '' AND created_at < ? ORDER BY created_at LIMIT ?`, before.UnixMilli(), limit)
}

// UnplacedCards lists decided requests whose card's place was never
// recorded (a crash came between the card's post and SetApprovalCard, or
// the post failed) and that are not marked shown, oldest first, at most
// limit: their card, if it was posted, still offers buttons.
func (s *Approvals) UnplacedCards(ctx context.Context, limit int) ([]approvals.Approval, error) {
	return s.list(ctx, "unplaced cards", `state != 'pending' AND card_message = '' AND card_shown = 0 ORDER BY created_at LIMIT ?`, limit)
}
