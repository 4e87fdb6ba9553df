package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

// A read-only store reads what the writer wrote, refuses to write, and
// opens nothing that is not there.
func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	if _, _, err := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "slack", Channel: "C1", Thread: "1.2"}); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(ctx, Config{Path: s.Path()})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n, err := ro.Sessions().CountSessions(ctx); err != nil || n != 1 {
		t.Errorf("CountSessions = %d, %v; want 1", n, err)
	}
	if _, _, err := ro.Sessions().SessionFor(ctx, ThreadKey{Platform: "slack", Channel: "C1", Thread: "3.4"}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write through the read-only store: %v; want a read-only error", err)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := OpenReadOnly(ctx, Config{Path: missing}); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("OpenReadOnly of a missing file: %v; want ErrNoDatabase", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("OpenReadOnly created the missing database")
	}
}

// An empty file is a database of schema 0: the read-only store sends the
// person to migrate rather than failing on a missing table.
func TestOpenReadOnlyRefusesAnOlderSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	os.WriteFile(path, nil, 0o600)
	if _, err := OpenReadOnly(context.Background(), Config{Path: path}); !errors.Is(err, ErrOlderSchema) {
		t.Errorf("OpenReadOnly of schema 0: %v; want ErrOlderSchema", err)
	}
}

func TestListSessionsLatestFirstWithWhoAndState(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	a, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "slack", Channel: "C1", Thread: "1.2"})
	clock.Add(time.Minute)
	b, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "discord", Channel: "42", Thread: "43"})
	if _, err := s.Jobs().CreateJob(ctx, hosts.Job{SessionID: b.ID, Host: "web-1", Command: "uptime", Requester: "discord:77"}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	turn, _ := s.Sessions().BeginTurn(ctx, a.ID)
	s.Sessions().EndTurn(ctx, turn.ID, TurnFailed)
	ap := approvals.Approval{Hash: "h", SessionID: a.ID, Host: "db-1", Command: "reboot", Requester: "slack:U1", ExpiresAt: clock.Now().Add(time.Hour)}
	if _, err := s.Approvals().CreateApproval(ctx, ap); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sessions().ListSessions(ctx, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("ListSessions = %+v, %v", got, err)
	}
	if got[0].ID != a.ID || got[0].StartedBy != "slack:U1" || got[0].LastTurn != TurnFailed || got[0].Pending != 1 ||
		!got[0].LastActivity.Equal(clock.Now()) {
		t.Errorf("latest = %+v; want session %d by slack:U1, last turn failed, 1 pending, active at %v", got[0], a.ID, clock.Now())
	}
	if got[1].ID != b.ID || got[1].StartedBy != "discord:77" || got[1].LastTurn != "" {
		t.Errorf("older = %+v; want session %d started by discord:77 with no turn", got[1], b.ID)
	}
	if one, _ := s.Sessions().ListSessions(ctx, 1); len(one) != 1 || one[0].ID != a.ID {
		t.Errorf("limit 1 = %+v", one)
	}
}

func TestAuditSearchFilters(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	start := clock.Now()
	add := func(actor, action, subject, detail string) {
		t.Helper()
		clock.Add(time.Minute)
		if err := s.Audit().Audit(ctx, AuditEntry{Actor: actor, Action: action, Subject: subject, Detail: []byte(detail)}); err != nil {
			t.Fatal(err)
		}
	}
	add("web:alice", "command.start", "host:web-1", `{"command":"uptime"}`)
	add("slack:U2", "approval.request", "approval:x", `{"host":"db_1,web-1","command":"reboot"}`)
	add("scheduler", "command.start", "host:dbx1", `{}`)
	add("web:alice", "approval.vote", "approval:x", `{"vote":"approve"}`)
	tests := []struct {
		name string
		f    AuditFilter
		want []string // actions, oldest first
	}{
		{"all", AuditFilter{}, []string{"command.start", "approval.request", "command.start", "approval.vote"}},
		{"who by id", AuditFilter{Who: "alice"}, []string{"command.start", "approval.vote"}},
		{"who by key", AuditFilter{Who: "slack:U2"}, []string{"approval.request"}},
		{"host in a subject or a request's list", AuditFilter{Host: "web-1"}, []string{"command.start", "approval.request"}},
		{"host with an underscore is no pattern", AuditFilter{Host: "db_1"}, []string{"approval.request"}},
		{"since and until", AuditFilter{Since: start.Add(2 * time.Minute), Until: start.Add(4 * time.Minute)}, []string{"approval.request", "command.start"}},
		{"the latest n", AuditFilter{Limit: 2}, []string{"command.start", "approval.vote"}},
	}
	for _, tt := range tests {
		got, err := s.Audit().Search(ctx, tt.f)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var actions []string
		for _, e := range got {
			actions = append(actions, e.Action)
		}
		if strings.Join(actions, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: %v; want %v", tt.name, actions, tt.want)
		}
	}
}

// A backup taken while another connection writes opens, passes its
// integrity check and holds the rows written before it began.
func TestBackupWhileAWriterWrites(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	for i := range 50 {
		if err := s.Audit().Audit(ctx, AuditEntry{Actor: "opsbot", Action: "seed", Subject: "n:" + string(rune('a'+i%26))}); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.Audit().Audit(ctx, AuditEntry{Actor: "opsbot", Action: "during", Subject: "x"})
		}
	})
	// A write transaction open across the whole backup: the backup
	// needs no write lock, and copies only what was committed.
	open, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.ExecContext(ctx, `INSERT INTO audit (at, actor, action, subject) VALUES (0, 'opsbot', 'uncommitted', 'x')`); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "copy.db")
	rep, err := Backup(ctx, Config{Path: s.Path()}, dest, false)
	open.Rollback()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Size <= 0 || rep.Path != dest || rowsOf(rep, "audit") < 50 || rowsOf(rep, "sessions") != 0 {
		t.Errorf("report %+v; want a size and at least 50 audit rows", rep)
	}
	if _, err := os.Stat(dest + "-wal"); err == nil {
		t.Error("the copy left a -wal file: it is not one self-contained file")
	}
	cp, err := OpenReadOnly(ctx, Config{Path: dest})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	seeded, err := cp.Audit().Search(ctx, AuditFilter{Who: "opsbot"})
	if err != nil || len(seeded) < 50 {
		t.Errorf("the copy's audit: %d rows, %v; want at least 50", len(seeded), err)
	}
	for _, e := range seeded {
		if e.Action == "uncommitted" {
			t.Error("the copy holds a row that was never committed")
		}
	}
	if _, err := Backup(ctx, Config{Path: s.Path()}, dest, false); !errors.Is(err, ErrBackupExists) {
		t.Errorf("backup over an existing file: %v; want ErrBackupExists", err)
	}
	if _, err := Backup(ctx, Config{Path: s.Path()}, dest, true); err != nil {
		t.Errorf("backup over an existing file with overwrite: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), "*.partial")); len(left) > 0 {
		t.Errorf("partial files left: %v", left)
	}
}

func rowsOf(rep BackupReport, table string) int64 {
	for _, r := range rep.Rows {
		if r.Table == table {
			return r.Rows
		}
	}
	return -1
}
