package store

import (
	"context"
	"path/filepath"
	"testing"
)

// Every audit row carries the generation set when it was written: rows
// before SetGeneration 0, after it the new one.
func TestAuditRowsCarryTheGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Audit().Audit(ctx, AuditEntry{Actor: "opsbot", Action: "before", Subject: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetGeneration(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit().Audit(ctx, AuditEntry{Actor: "opsbot", Action: "after", Subject: "x"}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT action, generation FROM audit ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[string]int64{"before": 0, "after": 7}
	n := 0
	for rows.Next() {
		var action string
		var gen int64
		rows.Scan(&action, &gen)
		if g, ok := want[action]; ok && g != gen {
			t.Errorf("%s: generation %d, want %d", action, gen, g)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d audit rows, want 2", n)
	}
}
