package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

var _ approvals.GrantStore = (*Approvals)(nil)

// CreateGrant stores a scoped grant with the next short number of its
// thread and audits it; the returned Grant has its ID and Number.
func (s *Approvals) CreateGrant(ctx context.Context, g approvals.Grant) (approvals.Grant, error) {
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO grants (session_id, number, hosts, cwd, command, granted_by, approval_id, created_at, expires_at)
			VALUES (?, (SELECT coalesce(max(number), 0) + 1 FROM grants WHERE session_id = ?), ?, ?, ?, ?, ?, ?, ?)`,
			g.SessionID, g.SessionID, g.Hosts, g.Cwd, g.Command, g.By, g.Approval, g.CreatedAt.UnixMilli(), g.ExpiresAt.UnixMilli())
		if err != nil {
			return err
		}
		if g.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT number FROM grants WHERE id = ?`, g.ID).Scan(&g.Number); err != nil {
			return err
		}
		return appendAudit(ctx, tx, s.db.now(), g.By, "grant.create", grantSubject(g.ID), map[string]any{"approval": g.Approval,
			"hosts": g.Hosts, "cwd": g.Cwd, "command": g.Command, "expires_at": g.ExpiresAt.UTC()})
	})
	g.CreatedAt, g.ExpiresAt = g.CreatedAt.Round(time.Millisecond).UTC(), g.ExpiresAt.Round(time.Millisecond).UTC()
	return g, wrap("create grant", err)
}

func grantSubject(id int64) string { return fmt.Sprintf("grant:%d", id) }

const grantCols = `id, session_id, number, hosts, cwd, command, granted_by, approval_id, created_at, expires_at`

// ActiveGrants lists a thread's grants neither revoked nor expired at now,
// oldest first.
func (s *Approvals) ActiveGrants(ctx context.Context, sessionID int64, now time.Time) ([]approvals.Grant, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+grantCols+` FROM grants
		WHERE session_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY number`, sessionID, now.UnixMilli())
	if err != nil {
		return nil, wrap("active grants", err)
	}
	defer rows.Close()
	var out []approvals.Grant
	for rows.Next() {
		var g approvals.Grant
		var created, expires sql.NullInt64
		if err := rows.Scan(&g.ID, &g.SessionID, &g.Number, &g.Hosts, &g.Cwd, &g.Command, &g.By, &g.Approval, &created, &expires); err != nil {
			return nil, wrap("active grants", err)
		}
		g.CreatedAt, g.ExpiresAt = fromMS(created), fromMS(expires)
		out = append(out, g)
	}
	return out, wrap("active grants", rows.Err())
}

// RevokeGrant ends the thread's grant with this id (the N of its audit
// subject grant:N, the number people see), if it is active at now, and
// audits it; false when the thread had no such grant to revoke.
func (s *Approvals) RevokeGrant(ctx context.Context, sessionID, id int64, by string, now time.Time) (bool, error) {
	var won bool
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE grants SET revoked_at = ?, revoked_by = ?
			WHERE session_id = ? AND id = ? AND revoked_at IS NULL AND expires_at > ? RETURNING id`,
			now.UnixMilli(), by, sessionID, id, now.UnixMilli()).Scan(&id)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		won = true
		return appendAudit(ctx, tx, s.db.now(), by, "grant.revoke", grantSubject(id), nil)
	})
	return won, wrap("revoke grant", err)
}

// UseGrant audits a command a grant let run, with the grant's id.
func (s *Approvals) UseGrant(ctx context.Context, id int64, command, hosts, requester string) error {
	return wrap("use grant", s.db.tx(ctx, func(tx *sql.Tx) error {
		return appendAudit(ctx, tx, s.db.now(), requester, "grant.use", grantSubject(id), map[string]any{"command": command, "hosts": hosts})
	}))
}
