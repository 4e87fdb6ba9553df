package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
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

// MessageRef is where a person finds a thread's message on its platform.
type MessageRef struct {
	// Author is who wrote it: the web chat's user ("alice"), "" for the
	// bot's answers and for a question whose platform keeps no author
	// here (Slack, Discord).
	Author string
	// Platform and ID are the platform's name and its id of the message:
	// the web chat's message id ("m14"), a Slack message's ts (which
	// makes its permalink); "" when none is on record.
	Platform, ID string
}

// MessageRefs maps each message of a thread the memory holds (by seq) to
// its place on the platform. In the web chat a question is the person's
// message it came from (the last one of the thread before it), an answer
// the bot's first message after that question (the post its turn
// streamed into; a card comes later); elsewhere an answer is the last
// post the thread's turns streamed into before it (cards are not
// streams). Web messages are ordered by their id's number: many share a
// millisecond.
func (m *Memory) MessageRefs(ctx context.Context, sessionID int64) (map[int64]MessageRef, error) {
	rows, err := m.db.read.QueryContext(ctx, `WITH q AS (
		SELECT d.seq, d.role, d.session_id, d.at, s.platform, s.channel, s.thread,
			(SELECT CAST(substr(w.id, 2) AS INTEGER) FROM web_messages w WHERE s.platform = 'web' AND w.thread = s.thread
				AND w.channel = s.channel AND w.bot = 0 AND w.created_at <= d.at ORDER BY CAST(substr(w.id, 2) AS INTEGER) DESC LIMIT 1) AS asked
		FROM memory_docs d JOIN sessions s ON s.id = d.session_id WHERE d.session_id = ? AND d.kind = 'message')
		SELECT q.seq, q.platform, CASE WHEN q.role = 'user' THEN
			(SELECT w.id || char(31) || w.user FROM web_messages w WHERE w.thread = q.thread AND CAST(substr(w.id, 2) AS INTEGER) = q.asked)
		ELSE coalesce(
			(SELECT w.id FROM web_messages w WHERE w.thread = q.thread AND w.channel = q.channel AND w.bot = 1
				AND CAST(substr(w.id, 2) AS INTEGER) > q.asked ORDER BY CAST(substr(w.id, 2) AS INTEGER) LIMIT 1),
			(SELECT p.message_id FROM posted_messages p WHERE p.session_id = q.session_id AND p.created_at <= q.at
				ORDER BY p.created_at DESC, p.id DESC LIMIT 1)) END
		FROM q`, sessionID)
	if err != nil {
		return nil, wrap("message refs", err)
	}
	defer rows.Close()
	refs := map[int64]MessageRef{}
	for rows.Next() {
		var seq int64
		var r MessageRef
		var place sql.NullString
		if err := rows.Scan(&seq, &r.Platform, &place); err != nil {
			return nil, wrap("message refs", err)
		}
		r.ID, r.Author, _ = strings.Cut(place.String, "\x1f")
		refs[seq] = r
	}
	return refs, wrap("message refs", rows.Err())
}

// ThreadApproval is an audit row of one of a thread's approval requests:
// its request, a vote, or its decision.
type ThreadApproval struct {
	// ApprovalID names the request; AuditID the row.
	ApprovalID string
	AuditID    int64
	At         time.Time
	// Actor is who the row names ("web:alice"); Action is the row's
	// ("approval.request", "approval.vote", "approval.approved",
	// "approval.denied", "approval.expired").
	Actor, Action string
	// Host and Command are the request's.
	Host, Command string
}

// ThreadApprovals lists the audit rows of the approval requests made in
// a thread, oldest first.
func (m *Memory) ThreadApprovals(ctx context.Context, sessionID int64) ([]ThreadApproval, error) {
	rows, err := m.db.read.QueryContext(ctx, `SELECT p.id, a.id, a.at, a.actor, a.action, p.host, p.command
		FROM approvals p JOIN audit a ON a.subject = 'approval:' || p.id
		WHERE p.session_id = ? AND a.action IN ('approval.request','approval.vote','approval.approved','approval.denied','approval.expired')
		ORDER BY a.at, a.id`, sessionID)
	if err != nil {
		return nil, wrap("approvals of thread", err)
	}
	defer rows.Close()
	var out []ThreadApproval
	for rows.Next() {
		var a ThreadApproval
		var at sql.NullInt64
		if err := rows.Scan(&a.ApprovalID, &a.AuditID, &at, &a.Actor, &a.Action, &a.Host, &a.Command); err != nil {
			return nil, wrap("approvals of thread", err)
		}
		a.At = fromMS(at)
		out = append(out, a)
	}
	return out, wrap("approvals of thread", rows.Err())
}
