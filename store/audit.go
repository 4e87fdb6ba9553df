package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// Audit is the audit trail: who did what to which subject, and when.
type Audit struct {
	db    *Store
	group auditGroup // Audit's group commit
}

// AuditEntry is one line of the append-only audit trail.
type AuditEntry struct {
	ID      int64
	At      time.Time
	Actor   string // who: a user id, "opsbot", "scheduler", …
	Action  string // what: "approval.approved", "job.start", "policy.decide", …
	Subject string // on what: "approval:ID", "job:7", "host:web-1", …
	Detail  json.RawMessage
}

// Audit appends an entry; At defaults to now. Nothing can edit or delete it
// afterwards (triggers refuse). It returns once the entry is on disk;
// entries appended at the same time share one commit (auditGroup).
func (s *Audit) Audit(ctx context.Context, e AuditEntry) error {
	w := &auditWaiter{entry: e, turn: make(chan auditTurn, 1)}
	if s.group.join(w) {
		s.commitQueued(ctx)
	}
	for {
		t := <-w.turn
		if !t.lead {
			return t.err
		}
		s.commitQueued(ctx)
	}
}

// AuditTrail lists the entries about a subject ("" for all), oldest first.
func (s *Audit) AuditTrail(ctx context.Context, subject string) ([]AuditEntry, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, at, actor, action, subject, detail FROM audit
		WHERE ? = '' OR subject = ? ORDER BY id`, subject, subject)
	if err != nil {
		return nil, wrap("audit trail", err)
	}
	out, err := scanAudit(rows)
	return out, wrap("audit trail", err)
}

// scanAudit reads rows of (id, at, actor, action, subject, detail) and
// closes them.
func scanAudit(rows *sql.Rows) ([]AuditEntry, error) {
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at sql.NullInt64
		var detail string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Subject, &detail); err != nil {
			return nil, err
		}
		e.At, e.Detail = fromMS(at), json.RawMessage(detail)
		out = append(out, e)
	}
	return out, rows.Err()
}

// appendAudit writes an audit row inside the caller's transaction, so the
// state change and its record commit together.
func appendAudit(ctx context.Context, tx *sql.Tx, at int64, actor, action, subject string, detail map[string]any) error {
	raw := json.RawMessage("{}")
	if detail != nil {
		b, err := json.Marshal(detail)
		if err != nil {
			return err
		}
		raw = b
	}
	return appendAuditRaw(ctx, tx, at, actor, action, subject, raw)
}

func appendAuditRaw(ctx context.Context, tx *sql.Tx, at int64, actor, action, subject string, detail json.RawMessage) error {
	if len(detail) == 0 {
		detail = json.RawMessage("{}")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit (at, actor, action, subject, detail, generation)
		VALUES (?, ?, ?, ?, ?, (SELECT generation FROM leadership))`,
		at, actor, action, subject, string(detail))
	return err
}
