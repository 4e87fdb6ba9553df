package store

import (
	"context"
	"database/sql"
	"sync"
)

// The full-text index of the incident memory (memory_docs, migration
// 0022) is FTS5's, which go-sqlite3 compiles in only with the sqlite_fts5
// build tag. A migration cannot need it (a build without the tag must
// still open the database), so the index and the triggers that keep it in
// step with memory_docs are made here, when the store opens, and only
// when SQLite has FTS5. A build without it drops those triggers (they
// would fail every insert) and recalls with a LIKE scan; the next build
// with FTS5 finds them missing and rebuilds the index from memory_docs.
var memoryFTS = []string{
	`CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(text, content='memory_docs', content_rowid='id', tokenize='unicode61')`,
	`CREATE TRIGGER memory_fts_ai AFTER INSERT ON memory_docs BEGIN
		INSERT INTO memory_fts (rowid, text) VALUES (NEW.id, NEW.text); END`,
	`CREATE TRIGGER memory_fts_ad AFTER DELETE ON memory_docs BEGIN
		INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text); END`,
	`INSERT INTO memory_fts (memory_fts) VALUES ('rebuild')`,
}

// FullTextSearch says whether this build's SQLite has FTS5 (the
// sqlite_fts5 build tag): without it the incident memory recalls with a
// slower LIKE scan. `opsbot run` and `opsbot config check` say so.
func FullTextSearch() bool {
	ftsOnce.Do(func() {
		db, err := sql.Open("sqlite3", ":memory:")
		if err != nil {
			return
		}
		defer db.Close()
		var used int
		if db.QueryRow(`SELECT sqlite_compileoption_used('ENABLE_FTS5')`).Scan(&used) == nil {
			ftsBuilt = used == 1
		}
	})
	return ftsBuilt
}

var (
	ftsOnce  sync.Once
	ftsBuilt bool
)

// openMemoryIndex makes the full-text index when this build has FTS5 and
// the database lacks it, or drops its triggers when this build has not.
func (s *Store) openMemoryIndex(ctx context.Context) error {
	return wrap("open memory index", s.tx(ctx, func(tx *sql.Tx) error {
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN ('memory_fts_ai', 'memory_fts_ad')`).Scan(&have); err != nil {
			return err
		}
		if !FullTextSearch() {
			_, err := tx.ExecContext(ctx, `DROP TRIGGER IF EXISTS memory_fts_ai; DROP TRIGGER IF EXISTS memory_fts_ad`)
			return err
		}
		if have == 2 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER IF EXISTS memory_fts_ai; DROP TRIGGER IF EXISTS memory_fts_ad`); err != nil {
			return err
		}
		for _, q := range memoryFTS {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}))
}

// fullText says whether this database's memory has its full-text index
// in step: this build has FTS5 and the store made the index on open.
func (m *Memory) fullText(ctx context.Context) bool {
	if !FullTextSearch() {
		return false
	}
	var n int
	err := m.db.read.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name = 'memory_fts_ai'`).Scan(&n)
	return err == nil && n == 1
}
