package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
	"unicode"
)

// Memory is the incident memory: past questions, answers, alerts and the
// commands that ran, searchable by words, host and time (issue 33). Its
// rows are written by triggers as the rows they copy are (migration
// 0022), and go when those threads go.
type Memory struct{ db *Store }

// Memory is the incident memory of the database.
func (s *Store) Memory() *Memory { return &Memory{db: s} }

// Memory kinds: what a MemoryHit recalls.
const (
	MemoryMessage = "message" // a question or an answer
	MemoryCommand = "command" // a command that ran, from the audit trail
	MemoryAlert   = "alert"   // an alert group's title and labels
)

// MemoryQuery is what to recall.
type MemoryQuery struct {
	// Text is the words to look for; any of them matches, the rarer and
	// the more of them the better.
	Text string
	// Host, when set, keeps only what happened on that host: a command
	// run there, an alert whose instance or host label names it, a
	// message that names it.
	Host string
	// Since, when set, keeps only what happened at or after it.
	Since time.Time
	// Kind, when set, keeps only hits of that kind.
	Kind string
	// NotSession leaves out one thread (the one asking).
	NotSession int64
	// Limit caps the hits (default 20).
	Limit int
}

// MemoryHit is one thing recalled, with what a person needs to find it:
// its time and its thread, its audit row (a command) or its message.
type MemoryHit struct {
	Kind string
	Text string
	Host string
	At   time.Time
	// ExitCode is a command's; HasExit says whether it has one.
	ExitCode int
	HasExit  bool
	// SessionID and Thread are the thread it happened in (zero when not
	// known: a command no turn was running).
	SessionID int64
	Thread    ThreadKey
	// Seq is a message's sequence number in its thread, AuditID a
	// command's audit row; AlertRef an alert group's source and key.
	Seq      int64
	AuditID  int64
	AlertRef string
	// Role is a message's: "user" (a question) or "assistant" (an answer).
	Role string
}

// Search recalls what matches q, the best first. With the full-text
// index it ranks by FTS5's bm25; without it (a build without the
// sqlite_fts5 tag) it scans with LIKE and ranks by how many of the
// words match, then by recency.
func (m *Memory) Search(ctx context.Context, q MemoryQuery) ([]MemoryHit, error) {
	words := memoryWords(q.Text)
	if len(words) == 0 {
		return nil, nil
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	var query string
	var args []any
	if m.fullText(ctx) {
		query, args = ftsQuery(words, q)
	} else {
		query, args = likeQuery(words, q)
	}
	rows, err := m.db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap("search memory", err)
	}
	hits, err := scanHits(rows)
	return hits, wrap("search memory", err)
}

// hitCols are the columns scanHits reads, over memory_docs d, its
// session s and, for an alert, its group g.
const hitCols = `d.kind, d.text, d.host, d.at, d.exit_code, coalesce(d.session_id, gs.id, 0),
	coalesce(s.platform, g.platform, ''), coalesce(s.workspace, g.workspace, ''), coalesce(s.channel, g.channel, ''),
	coalesce(s.thread, g.thread, ''), coalesce(d.seq, 0), coalesce(d.audit_id, 0), coalesce(d.alert_ref, ''), d.role`

// hitJoins joins a memory row to its thread.
const hitJoins = ` LEFT JOIN sessions s ON s.id = d.session_id
	LEFT JOIN alert_groups g ON d.alert_ref IS NOT NULL AND g.source || char(31) || g.group_key = d.alert_ref
	LEFT JOIN sessions gs ON gs.platform = g.platform AND gs.channel = g.channel AND gs.thread = g.thread`

// filters are the WHERE terms every query shares, and their arguments.
func filters(q MemoryQuery) (string, []any) {
	var b strings.Builder
	var args []any
	if q.Host != "" {
		b.WriteString(` AND (d.host = ? OR d.host LIKE ? || ':%' OR (d.host = '' AND instr(lower(d.text), lower(?)) > 0))`)
		args = append(args, q.Host, q.Host, q.Host)
	}
	if !q.Since.IsZero() {
		b.WriteString(` AND d.at >= ?`)
		args = append(args, q.Since.UnixMilli())
	}
	if q.Kind != "" {
		b.WriteString(` AND d.kind = ?`)
		args = append(args, q.Kind)
	}
	if q.NotSession != 0 {
		b.WriteString(` AND coalesce(d.session_id, gs.id, 0) != ?`)
		args = append(args, q.NotSession)
	}
	return b.String(), args
}

func ftsQuery(words []string, q MemoryQuery) (string, []any) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = `"` + w + `"*` // a prefix: "disk" finds DiskFull
	}
	where, args := filters(q)
	args = append([]any{strings.Join(terms, " OR ")}, args...)
	return `SELECT ` + hitCols + ` FROM memory_fts f JOIN memory_docs d ON d.id = f.rowid` + hitJoins +
		` WHERE memory_fts MATCH ?` + where + ` ORDER BY bm25(memory_fts), d.at DESC LIMIT ?`, append(args, q.Limit)
}

func likeQuery(words []string, q MemoryQuery) (string, []any) {
	score := make([]string, len(words))
	var args []any
	for i, w := range words {
		score[i] = `(instr(lower(d.text), ?) > 0)`
		args = append(args, w)
	}
	where, fargs := filters(q)
	args = append(args, fargs...)
	return `SELECT * FROM (SELECT ` + hitCols + `, ` + strings.Join(score, " + ") + ` AS score FROM memory_docs d` + hitJoins +
		` WHERE 1` + where + `) WHERE score > 0 ORDER BY score DESC, 4 DESC LIMIT ?`, append(args, q.Limit)
}

// scanHits reads and closes rows of hitCols (and, from the LIKE scan,
// its score, ignored).
func scanHits(rows *sql.Rows) ([]MemoryHit, error) {
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []MemoryHit
	for rows.Next() {
		var h MemoryHit
		var at sql.NullInt64
		var exit sql.NullInt64
		dest := []any{&h.Kind, &h.Text, &h.Host, &at, &exit, &h.SessionID, &h.Thread.Platform, &h.Thread.Workspace,
			&h.Thread.Channel, &h.Thread.Thread, &h.Seq, &h.AuditID, &h.AlertRef, &h.Role}
		for len(dest) < len(cols) {
			dest = append(dest, new(any))
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		h.At, h.ExitCode, h.HasExit = fromMS(at), int(exit.Int64), exit.Valid
		out = append(out, h)
	}
	return out, rows.Err()
}

// memoryWords are the words of a query, lowercased, once each, without
// the commonest English ones: they match everything and rank nothing.
func memoryWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		if len(w) < 2 || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

var stopWords = map[string]bool{
	"the": true, "is": true, "are": true, "was": true, "on": true, "in": true, "of": true, "to": true, "and": true,
	"or": true, "a": true, "an": true, "it": true, "for": true, "with": true, "what": true, "why": true, "how": true,
	"this": true, "that": true, "be": true, "at": true, "by": true, "from": true, "can": true, "you": true, "me": true,
}
