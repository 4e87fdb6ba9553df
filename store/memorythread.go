package store

import (
	"context"
	"database/sql"
)

// Thread is what the memory holds of one thread, oldest first: its
// messages, its alert and the commands its turns ran.
func (m *Memory) Thread(ctx context.Context, sessionID int64) ([]MemoryHit, error) {
	rows, err := m.db.read.QueryContext(ctx, `SELECT `+hitCols+` FROM memory_docs d`+hitJoins+`
		WHERE coalesce(d.session_id, gs.id, 0) = ? ORDER BY d.at, d.id`, sessionID)
	if err != nil {
		return nil, wrap("memory of thread", err)
	}
	hits, err := scanHits(rows)
	return hits, wrap("memory of thread", err)
}

// ThreadCommand is a command that ran in a thread, from its audit row:
// who asked, and who approved it when it needed approval.
type ThreadCommand struct {
	MemoryHit
	// Actor is who the audit row says asked ("slack:U1", "alert:am").
	Actor string
	// ApprovedBy is who decided its approval request ("" when it needed
	// none or none of this thread matches it).
	ApprovedBy string
}

// ThreadCommands lists the commands that ran in a thread, oldest first,
// each with its audit row's actor and its approval's decider.
func (m *Memory) ThreadCommands(ctx context.Context, sessionID int64) ([]ThreadCommand, error) {
	rows, err := m.db.read.QueryContext(ctx, `SELECT d.at, d.host, d.text, d.exit_code, d.audit_id, a.actor,
		coalesce((SELECT p.decided_by FROM approvals p WHERE p.session_id = d.session_id AND p.host = d.host
			AND p.command = d.text AND p.state = 'approved' AND p.decided_at <= d.at ORDER BY p.decided_at DESC LIMIT 1), '')
		FROM memory_docs d JOIN audit a ON a.id = d.audit_id
		WHERE d.session_id = ? AND d.kind = 'command' ORDER BY d.at, d.id`, sessionID)
	if err != nil {
		return nil, wrap("commands of thread", err)
	}
	defer rows.Close()
	var out []ThreadCommand
	for rows.Next() {
		c := ThreadCommand{MemoryHit: MemoryHit{Kind: MemoryCommand, SessionID: sessionID}}
		var at, exit sql.NullInt64
		if err := rows.Scan(&at, &c.Host, &c.Text, &exit, &c.AuditID, &c.Actor, &c.ApprovedBy); err != nil {
			return nil, wrap("commands of thread", err)
		}
		c.At, c.ExitCode, c.HasExit = fromMS(at), int(exit.Int64), exit.Valid
		out = append(out, c)
	}
	return out, wrap("commands of thread", rows.Err())
}

// RefExists says whether a reference a document cites is on record: an
// audit row (auditID) or a message of the thread (seq), as the memory
// keeps it (it outlives a compaction or a reset).
func (m *Memory) RefExists(ctx context.Context, sessionID, auditID, seq int64) (bool, error) {
	var n int
	var err error
	switch {
	case auditID != 0:
		err = m.db.read.QueryRowContext(ctx, `SELECT count(*) FROM audit WHERE id = ?`, auditID).Scan(&n)
	case seq != 0:
		err = m.db.read.QueryRowContext(ctx, `SELECT count(*) FROM memory_docs WHERE session_id = ? AND kind = 'message' AND seq = ?`, sessionID, seq).Scan(&n)
	}
	return n > 0, wrap("reference exists", err)
}
