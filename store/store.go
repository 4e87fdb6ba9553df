package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// Config is the `store` section of the config file.
type Config struct {
	// Path is the SQLite database file (default ./opsbot.db).
	Path string `yaml:"path"`
	// BusyTimeout is how long a writer waits for another writer's lock
	// before failing (default 10s).
	BusyTimeout time.Duration `yaml:"busy_timeout"`
	// ReadTimeout bounds every wait of a read (default 5s: generous for
	// a loaded machine, half SQLite's own 10 s): a read the database does
	// not answer in time fails, saying so, instead of holding a page, a
	// stream or a health check while the disk stalls.
	ReadTimeout time.Duration `yaml:"read_timeout"`
}

// DefaultPath is the database file of the embedded default.
const DefaultPath = "opsbot.db"

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.BusyTimeout == 0 {
		c.BusyTimeout = 10 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 5 * time.Second
	}
	return c
}

// Validate checks the section.
func (c Config) Validate() error {
	if c.BusyTimeout < 0 {
		return fieldError{"busy_timeout", "must be a positive duration, e.g. 10s"}
	}
	if c.ReadTimeout < 0 {
		return fieldError{"read_timeout", "must be a positive duration, e.g. 5s"}
	}
	return nil
}

// fieldError is a validation error about one key of this section.
type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the key's name within the section.
func (e fieldError) Field() string { return e.key }

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNewerSchema is returned by Open for a database written by a newer
// version of opsbot.
var ErrNewerSchema = errors.New("store: database schema is newer than this opsbot")

// ErrNotFound is returned when a row asked for by id does not exist.
var ErrNotFound = errors.New("not found")

// Store is the SQLite database. Writes go through one connection so that
// writers queue in Go rather than in SQLite's lock; reads use a pool of
// their own, never the writer's connection, each read bounded by
// Config.ReadTimeout (readpool.go), so a read never waits behind a write.
type Store struct {
	write *sql.DB
	read  *sql.DB
	reads *readConnector // read's connections
	path  string
	fault writeFault
	// Now is the clock; tests replace it.
	Now func() time.Time

	approvals Approvals
	jobs      Jobs
	inbox     Inbox
	sessions  Sessions
	checks    Checks
	web       Web
	audit     Audit
}

// Approvals is the approvals aggregate of the database.
func (s *Store) Approvals() *Approvals { return &s.approvals }

// Jobs is the jobs aggregate of the database.
func (s *Store) Jobs() *Jobs { return &s.jobs }

// Inbox is the inbox aggregate of the database.
func (s *Store) Inbox() *Inbox { return &s.inbox }

// Sessions is the sessions aggregate of the database.
func (s *Store) Sessions() *Sessions { return &s.sessions }

// Checks is the health checks aggregate of the database.
func (s *Store) Checks() *Checks { return &s.checks }

// Web is the web chat's aggregate of the database.
func (s *Store) Web() *Web { return &s.web }

// Audit is the audit trail of the database.
func (s *Store) Audit() *Audit { return &s.audit }

// Open opens (creating if needed) the database at cfg.Path and applies the
// migrations it lacks.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := CheckFolder(cfg.Path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	write, err := sql.Open("sqlite3", dsn(cfg, "immediate"))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", cfg.Path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	s := &Store{write: write, path: cfg.Path, Now: time.Now}
	s.approvals, s.jobs, s.inbox, s.sessions = Approvals{s}, Jobs{s}, Inbox{s}, Sessions{s}
	s.checks, s.web, s.audit = Checks{s}, Web{s}, Audit{db: s}
	if err := s.migrate(ctx); err != nil {
		write.Close()
		return nil, err
	}
	if err := s.openMemoryIndex(ctx); err != nil { // memoryindex.go
		write.Close()
		return nil, err
	}
	s.reads = newReadConnector(readDSN(cfg), cfg.Path, cfg.ReadTimeout)
	s.read = sql.OpenDB(s.reads)
	s.read.SetMaxOpenConns(readPool)
	s.read.SetMaxIdleConns(readPool)
	return s, nil
}

// dsn builds the go-sqlite3 connection string: WAL, foreign keys and the
// busy timeout are set on every connection the pool opens.
func dsn(cfg Config, txlock string) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", fmt.Sprint(cfg.BusyTimeout.Milliseconds()))
	q.Set("_synchronous", "FULL") // an approval is on disk before it is announced
	q.Set("_txlock", txlock)
	return "file:" + (&url.URL{Path: cfg.Path}).EscapedPath() + "?" + q.Encode()
}

// readDSN is the connection string of the read pool: foreign keys as
// everywhere, and a busy timeout no longer than a read may wait. It sets
// no journal mode: the writer did, and a reader has no business
// changing it.
func readDSN(cfg Config) string {
	q := url.Values{}
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", fmt.Sprint(cfg.ReadTimeout.Milliseconds()))
	q.Set("_txlock", "deferred")
	return "file:" + (&url.URL{Path: cfg.Path}).EscapedPath() + "?" + q.Encode()
}

// Close closes the database; calling it twice is safe.
func (s *Store) Close() error {
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	errs = append(errs, s.write.Close())
	return errors.Join(errs...)
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Ping checks that the database answers a read of its own pages (a
// `SELECT 1` would not touch the file, and so answered while every real
// read waited); /readyz uses it.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	return s.read.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n)
}

// SchemaVersion is the number of migrations the database has.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// migrations lists the embedded migration files in order.
func migrations() ([]string, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	sort.Strings(names)
	return names, err
}

// LatestSchema is the schema version this build writes.
func LatestSchema() int {
	names, _ := migrations()
	return len(names)
}

// migrate applies each missing migration in its own transaction together
// with the new user_version, so a crash leaves a consistent version.
func (s *Store) migrate(ctx context.Context) error {
	names, err := migrations()
	if err != nil {
		return fmt.Errorf("store: list migrations: %w", err)
	}
	for {
		applied, err := s.applyNext(ctx, names)
		if err != nil || !applied {
			return err
		}
	}
}

func (s *Store) applyNext(ctx context.Context, names []string) (bool, error) {
	applied := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		if v > len(names) {
			return fmt.Errorf("%w: %s has schema version %d, this build knows up to %d; run a newer opsbot or point store.path at another file",
				ErrNewerSchema, s.path, v, len(names))
		}
		if v == len(names) {
			return nil
		}
		body, err := migrationFiles.ReadFile(names[v])
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("apply %s: %w", names[v], err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			return err
		}
		applied = true
		return nil
	})
	if err != nil && !errors.Is(err, ErrNewerSchema) {
		err = fmt.Errorf("store: migrate %s: %w", s.path, err)
	}
	return applied, err
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE, from the DSN).
// A write the disk refuses fails with an *Unavailable and is remembered
// until a write succeeds (Health).
// The commit is not tied to ctx: once fn succeeded, the write lands even if
// the caller gives up meanwhile.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.write.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return s.noteWrite(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return s.noteWrite(err)
	}
	return s.noteWrite(tx.Commit())
}

// now is the injected clock in Unix milliseconds.
func (s *Store) now() int64 { return s.Now().UnixMilli() }

// fromMS converts a stored time back; NULL becomes the zero time.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}
