package store

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// shipped are the migrations of released schemas, in the order they were
// applied. A database's user_version counts the files applied in sorted
// order, so a new migration goes after all of these: one sorted between
// them would be skipped on a database that has the later ones, and one of
// theirs would run twice.
var shipped = []string{
	"0001_init.sql", "0002_transcripts.sql", "0003_approval_use.sql", "0004_web_messages.sql",
	"0006_checks.sql", "0007_approval_followups.sql", "0008_web_pages.sql", "0009_running_commands.sql",
	"0010_inbox.sql", "0011_counters.sql", "0012_web_post_requests.sql", "0013_token_usage.sql",
	"0016_alerts.sql", "0019_plans.sql", "0020_grants.sql", "0021_feedback.sql", "0022_memory.sql",
	"0023_generation.sql", "0024_postmortems.sql", "0025_queued_notices.sql", "0026_memory_thread.sql",
	"0027_assistant_threads.sql", "0028_feedback_once.sql", "0029_posted_cards.sql",
}

// TestMigrationsOnlyAppend: the embedded migrations begin with every
// shipped one, in its place (a migration named 0017_… after 0026 shipped
// broke upgrades: a version-21 database ran 0026 again and never got the
// new table).
func TestMigrationsOnlyAppend(t *testing.T) {
	names, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		names[i] = names[i][len("migrations/"):]
	}
	if len(names) < len(shipped) || !slices.Equal(names[:len(shipped)], shipped) {
		t.Fatalf("the migrations are\n%v\nthey must begin with the shipped ones, in order (a new migration sorts after the last shipped one):\n%v", names, shipped)
	}
}

// TestUpgradeFromTheLastShippedSchema: a database made by the shipped
// migrations alone (as the last release left it) opens and gets every
// later migration: each table they add is there.
func TestUpgradeFromTheLastShippedSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range shipped {
		body, err := migrationFiles.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(shipped))); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatalf("the upgrade failed: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != LatestSchema() {
		t.Fatalf("schema version %d after the upgrade, want %d", v, LatestSchema())
	}
	var n int
	if err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM assistant_threads").Scan(&n); err != nil {
		t.Fatalf("a table of a later migration is missing: %v", err)
	}
	if err := s.read.QueryRowContext(ctx, "SELECT count(open_cards) FROM posted_messages").Scan(&n); err != nil {
		t.Fatalf("a column of a later migration is missing: %v", err)
	}
}
