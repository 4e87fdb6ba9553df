package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// The operator's reads: the commands `opsbot sessions list` and `opsbot
// audit` and the chat's `approvals` list what the bot keeps, from a store
// opened read-only beside the running bot (WAL lets a reader in while the
// bot writes; the bot's lock file is not needed to read).

// ErrNoDatabase is returned by OpenReadOnly when the database file does
// not exist.
var ErrNoDatabase = errors.New("store: no database")

// ErrOlderSchema is returned by OpenReadOnly for a database that lacks
// this build's migrations: reading it would ask for columns it has not.
var ErrOlderSchema = errors.New("store: database schema is older than this opsbot")

// OpenReadOnly opens an existing database for reading only: it creates
// nothing, migrates nothing, and every write through it fails. It is what
// the operator commands use, safe while `opsbot run` holds the database.
func OpenReadOnly(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if _, err := os.Stat(cfg.Path); err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrNoDatabase, cfg.Path, err)
	}
	ro := roDSN(readDSN(cfg))
	write, err := sql.Open("sqlite3", ro)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", cfg.Path, err)
	}
	write.SetMaxOpenConns(1)
	s := &Store{write: write, path: cfg.Path, Now: time.Now}
	s.approvals, s.jobs, s.inbox, s.sessions = Approvals{s}, Jobs{s}, Inbox{s}, Sessions{s}
	s.checks, s.web, s.audit = Checks{s}, Web{s}, Audit{db: s}
	s.reads = newReadConnector(ro, cfg.Path, cfg.ReadTimeout)
	s.read = sql.OpenDB(s.reads)
	s.read.SetMaxOpenConns(readPool)
	if err := s.checkSchema(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// roDSN makes a connection string read-only.
func roDSN(dsn string) string { return dsn + "&" + url.Values{"mode": {"ro"}}.Encode() }

// checkSchema refuses a database whose schema is not this build's.
func (s *Store) checkSchema(ctx context.Context) error {
	v, err := s.SchemaVersion(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("store: read %s: %w", s.path, err)
	case v > LatestSchema():
		return fmt.Errorf("%w: %s has schema version %d, this build knows up to %d", ErrNewerSchema, s.path, v, LatestSchema())
	case v < LatestSchema():
		return fmt.Errorf("%w: %s has schema version %d, this build reads %d", ErrOlderSchema, s.path, v, LatestSchema())
	}
	return nil
}

// SessionSummary is a session as an operator lists it.
type SessionSummary struct {
	Session
	// StartedBy is who first asked in the thread, as far as the database
	// tells (the web chat's first author, else the first requester of an
	// approval or a job there): a person's key like "web:alice", or ""
	// when it does not say.
	StartedBy string
	// LastActivity is the latest of its messages, turns and changes.
	LastActivity time.Time
	// LastTurn is the status of its latest turn ("" before any).
	LastTurn TurnStatus
	// Pending counts its approval requests still waiting.
	Pending int
}

// ListSessions lists up to limit sessions (all when limit <= 0), the
// latest active first.
func (s *Sessions) ListSessions(ctx context.Context, limit int) ([]SessionSummary, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT s.id, s.platform, s.workspace, s.channel, s.thread, s.cwd, s.created_at, s.updated_at,
		max(s.updated_at,
			coalesce((SELECT max(created_at) FROM messages WHERE session_id = s.id), 0),
			coalesce((SELECT max(coalesce(ended_at, started_at)) FROM turns WHERE session_id = s.id), 0)) AS last,
		coalesce((SELECT status FROM turns WHERE session_id = s.id ORDER BY id DESC LIMIT 1), ''),
		(SELECT count(*) FROM approvals WHERE session_id = s.id AND state = 'pending'),
		coalesce(
			(SELECT 'web:' || user FROM web_messages WHERE s.platform = 'web' AND thread = s.thread AND bot = 0 AND user != '' ORDER BY seq LIMIT 1),
			(SELECT requester FROM approvals WHERE session_id = s.id AND requester != '' ORDER BY created_at LIMIT 1),
			(SELECT requester FROM jobs WHERE session_id = s.id AND requester != '' ORDER BY id LIMIT 1), '')
		FROM sessions s ORDER BY last DESC, s.id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, wrap("list sessions", err)
	}
	defer rows.Close()
	var out []SessionSummary
	for rows.Next() {
		var m SessionSummary
		var created, updated, last sql.NullInt64
		if err := rows.Scan(&m.ID, &m.Platform, &m.Workspace, &m.Channel, &m.Thread, &m.Cwd, &created, &updated,
			&last, &m.LastTurn, &m.Pending, &m.StartedBy); err != nil {
			return nil, wrap("list sessions", err)
		}
		m.CreatedAt, m.UpdatedAt, m.LastActivity = fromMS(created), fromMS(updated), fromMS(last)
		out = append(out, m)
	}
	return out, wrap("list sessions", rows.Err())
}

// AuditFilter chooses audit entries; a zero field does not filter.
type AuditFilter struct {
	// Who matches the actor: its whole key ("web:alice") or its id
	// ("alice", whatever the platform).
	Who string
	// Host matches a command's host ("host:NAME" subjects) and an
	// approval request's host (one of its detail's comma list).
	Host string
	// Since and Until bound the time: Since <= at < Until.
	Since, Until time.Time
	// Limit keeps the latest Limit entries; <= 0 keeps all.
	Limit int
	// ID, when set, keeps the one entry with that id (the number a
	// postmortem's "audit row N" names).
	ID int64
}

// Search lists the entries that match f, oldest first: the latest
// f.Limit of them when a limit is set, as `tail` would.
func (s *Audit) Search(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	where, args := f.where()
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, at, actor, action, subject, detail FROM (
		SELECT * FROM audit WHERE `+where+` ORDER BY id DESC LIMIT ?) ORDER BY id`, append(args, limit)...)
	if err != nil {
		return nil, wrap("search audit", err)
	}
	out, err := scanAudit(rows)
	return out, wrap("search audit", err)
}

// where is the filter's SQL condition and its arguments.
func (f AuditFilter) where() (string, []any) {
	conds, args := []string{"1"}, []any{}
	if f.ID > 0 {
		conds = append(conds, `id = ?`)
		args = append(args, f.ID)
	}
	if f.Who != "" {
		conds = append(conds, `(actor = ? OR substr(actor, instr(actor, ':') + 1) = ?)`)
		args = append(args, f.Who, f.Who)
	}
	if f.Host != "" {
		conds = append(conds, `(subject = 'host:' || ? OR (json_valid(detail) AND
			instr(',' || coalesce(json_extract(detail, '$.host'), '') || ',', ',' || ? || ',') > 0))`)
		args = append(args, f.Host, f.Host)
	}
	if !f.Since.IsZero() {
		conds = append(conds, `at >= ?`)
		args = append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		conds = append(conds, `at < ?`)
		args = append(args, f.Until.UnixMilli())
	}
	return strings.Join(conds, " AND "), args
}
