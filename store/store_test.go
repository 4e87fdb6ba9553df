package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors/web/archive"
)

// fixedClock is an injectable clock that tests move by hand.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openTest opens a store in a fresh file, with a clock the test controls.
func openTest(t *testing.T) (*Store, *fixedClock) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	s, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := &fixedClock{t: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
	s.Now = clock.Now
	return s, clock
}

func TestOpenAppliesMigrationsOnceAndSetsPragmas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	ctx := context.Background()
	for range 3 { // idempotent: opening again changes nothing
		s, err := Open(ctx, Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil || v != LatestSchema() {
			t.Fatalf("schema version = %d, %v; want %d", v, err, LatestSchema())
		}
		var mode string
		var fk, busy, readBusy int
		s.write.QueryRow("PRAGMA journal_mode").Scan(&mode)
		s.read.QueryRow("PRAGMA foreign_keys").Scan(&fk)
		s.write.QueryRow("PRAGMA busy_timeout").Scan(&busy)
		s.read.QueryRow("PRAGMA busy_timeout").Scan(&readBusy)
		if mode != "wal" || fk != 1 || busy != 10000 || readBusy != 5000 {
			t.Errorf("journal_mode=%s foreign_keys=%d busy_timeout=%d (reads %d); want wal 1 10000 (reads 5000)", mode, fk, busy, readBusy)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), Config{Path: path})
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("err = %v; want ErrNewerSchema", err)
	}
	if !strings.Contains(err.Error(), "999") || !strings.Contains(err.Error(), "newer opsbot") {
		t.Errorf("error does not say what to do: %v", err)
	}
}

func TestSessionForCreatesOnceAndFindsAgain(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	key := ThreadKey{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "1700000000.1"}
	a, created, err := s.Sessions().SessionFor(ctx, key)
	if err != nil || !created || a.ID == 0 {
		t.Fatalf("first SessionFor = %+v, %v, %v", a, created, err)
	}
	b, created, err := s.Sessions().SessionFor(ctx, key)
	if err != nil || created || b.ID != a.ID {
		t.Fatalf("second SessionFor = %+v, %v, %v; want same id, not created", b, created, err)
	}
	other, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "slack", Channel: "C1", Thread: "other"})
	if other.ID == a.ID {
		t.Fatal("two threads share a session")
	}
	if err := s.Sessions().SetSessionCwd(ctx, a.ID, "/tmp/opsbot/1"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sessions().Session(ctx, a.ID)
	if err != nil || got.Cwd != "/tmp/opsbot/1" || got.ThreadKey != key {
		t.Fatalf("Session = %+v, %v", got, err)
	}
	if _, err := s.Sessions().Session(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing session: err = %v; want ErrNotFound", err)
	}
	if err := s.Sessions().SetSessionCwd(ctx, 9999, "/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cwd of missing session: err = %v; want ErrNotFound", err)
	}
	if n, _ := s.Sessions().CountSessions(ctx); n != 2 {
		t.Errorf("CountSessions = %d; want 2", n)
	}
}

func TestMessagesAppendListAndRollBack(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t"})
	if _, err := s.Sessions().AppendMessages(ctx, sess.ID, Message{Role: "user", Content: []byte(`[{"type":"text","text":"hi"}]`)}); err != nil {
		t.Fatal(err)
	}
	turn, err := s.Sessions().BeginTurn(ctx, sess.ID)
	if err != nil || turn.StartSeq != 1 {
		t.Fatalf("BeginTurn = %+v, %v; want start seq 1", turn, err)
	}
	added, err := s.Sessions().AppendMessages(ctx, sess.ID,
		Message{Role: "assistant", Content: []byte(`[{"type":"tool_use","id":"t1"}]`), Tokens: 12},
		Message{Role: "user", Content: []byte(`[{"type":"tool_result","tool_use_id":"t1"}]`)})
	if err != nil || added[0].Seq != 2 || added[1].Seq != 3 {
		t.Fatalf("AppendMessages = %+v, %v; want seqs 2, 3", added, err)
	}
	if _, err := s.Sessions().AppendMessages(ctx, sess.ID, Message{Role: "user", Content: []byte(`{not json`)}); err == nil {
		t.Error("invalid JSON content was accepted")
	}
	msgs, _ := s.Sessions().Messages(ctx, sess.ID)
	if len(msgs) != 3 || msgs[1].Tokens != 12 || string(msgs[2].Content) != `[{"type":"tool_result","tool_use_id":"t1"}]` {
		t.Fatalf("Messages = %+v", msgs)
	}
	if last, _ := s.Sessions().LastSeq(ctx, sess.ID); last != 3 {
		t.Errorf("LastSeq = %d; want 3", last)
	}
	if running, _ := s.Sessions().RunningTurns(ctx); len(running) != 1 || running[0].ID != turn.ID {
		t.Errorf("RunningTurns = %+v", running)
	}
	// Cancel: roll back to where the turn began.
	n, err := s.Sessions().DeleteMessagesAfter(ctx, sess.ID, turn.StartSeq)
	if err != nil || n != 2 {
		t.Fatalf("DeleteMessagesAfter = %d, %v; want 2", n, err)
	}
	if won, _ := s.Sessions().EndTurn(ctx, turn.ID, TurnCancelled); !won {
		t.Error("EndTurn of a running turn did not win")
	}
	if won, _ := s.Sessions().EndTurn(ctx, turn.ID, TurnDone); won {
		t.Error("EndTurn of an ended turn won again")
	}
	msgs, _ = s.Sessions().Messages(ctx, sess.ID)
	if len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("after rollback Messages = %+v", msgs)
	}
	next, _ := s.Sessions().AppendMessages(ctx, sess.ID, Message{Role: "user", Content: []byte(`"again"`)})
	if next[0].Seq != 2 {
		t.Errorf("seq after rollback = %d; want 2", next[0].Seq)
	}
}

func TestEventsSeenDedup(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	if first, err := s.Inbox().SeenEvent(ctx, "slack", "Ev1"); err != nil || !first {
		t.Fatalf("first SeenEvent = %v, %v", first, err)
	}
	if first, _ := s.Inbox().SeenEvent(ctx, "slack", "Ev1"); first {
		t.Error("a retried event was new again")
	}
	if first, _ := s.Inbox().SeenEvent(ctx, "discord", "Ev1"); !first {
		t.Error("the same id on another platform is a different event")
	}
	clock.Add(48 * time.Hour)
	if n, _ := s.Inbox().ForgetEventsBefore(ctx, clock.Now().Add(-24*time.Hour)); n != 2 {
		t.Errorf("ForgetEventsBefore dropped %d; want 2", n)
	}
	if first, _ := s.Inbox().SeenEvent(ctx, "slack", "Ev1"); !first {
		t.Error("a forgotten event id was still seen")
	}
}

func TestPostedMessagesLifecycle(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	m, err := s.Sessions().RecordStreaming(ctx, PostedMessage{Platform: "slack", Channel: "C1", Thread: "1.1", MessageID: "1.2", Text: "Look"})
	if err != nil || m.ID == 0 {
		t.Fatalf("RecordStreaming = %+v, %v", m, err)
	}
	if err := s.Sessions().UpdateStreamingText(ctx, m.ID, "Looking at the disk"); err != nil {
		t.Fatal(err)
	}
	other, _ := s.Sessions().RecordStreaming(ctx, PostedMessage{Platform: "slack", Channel: "C1", MessageID: "1.3"})
	left, _ := s.Sessions().StreamingMessages(ctx)
	if len(left) != 2 || left[0].Text != "Looking at the disk" {
		t.Fatalf("StreamingMessages = %+v", left)
	}
	if err := s.Sessions().FinishStreaming(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	left, _ = s.Sessions().StreamingMessages(ctx)
	if len(left) != 1 || left[0].ID != m.ID {
		t.Fatalf("after finish StreamingMessages = %+v", left)
	}
	if err := s.Sessions().FinishStreaming(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishStreaming of missing = %v; want ErrNotFound", err)
	}
}

func TestCheckRunsSaveAndList(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	start := clock.Now()
	run := checks.CheckRun{Schedule: "nightly", StartedAt: start, EndedAt: start.Add(2 * time.Second), Results: []checks.CheckResult{
		{Host: "web-1", Check: "disk", OK: true, Output: "12%", Duration: 30 * time.Millisecond},
		{Host: "web-2", Check: "disk", OK: false, Output: "97%", Duration: 40 * time.Millisecond},
	}}
	saved, err := s.Checks().SaveCheckRun(ctx, run)
	if err != nil || saved.ID == 0 {
		t.Fatalf("SaveCheckRun = %+v, %v", saved, err)
	}
	s.Checks().SaveCheckRun(ctx, checks.CheckRun{Schedule: "nightly", StartedAt: start.Add(time.Hour), EndedAt: start.Add(time.Hour)})
	runs, err := s.Checks().LastCheckRuns(ctx, "nightly", 5)
	if err != nil || len(runs) != 2 || runs[1].ID != saved.ID {
		t.Fatalf("LastCheckRuns = %+v, %v", runs, err)
	}
	if r := runs[1].Results; len(r) != 2 || r[1].OK || r[1].Output != "97%" || r[0].Duration != 30*time.Millisecond {
		t.Errorf("results = %+v", r)
	}
	// A duplicate (run, host, check) is rejected and nothing of that run lands.
	bad := checks.CheckRun{Schedule: "dup", StartedAt: start, EndedAt: start, Results: []checks.CheckResult{{Host: "a", Check: "c"}, {Host: "a", Check: "c"}}}
	if _, err := s.Checks().SaveCheckRun(ctx, bad); err == nil {
		t.Error("duplicate result accepted")
	}
	if runs, _ := s.Checks().LastCheckRuns(ctx, "dup", 5); len(runs) != 0 {
		t.Errorf("a failed SaveCheckRun left %d runs", len(runs))
	}
}

func TestAuditIsAppendOnly(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	if err := s.Audit().Audit(ctx, AuditEntry{Actor: "U1", Action: "policy.decide", Subject: "host:web-1", Detail: []byte(`{"decision":"allow"}`)}); err != nil {
		t.Fatal(err)
	}
	s.Audit().Audit(ctx, AuditEntry{Actor: "U2", Action: "x", Subject: "host:web-2"})
	trail, err := s.Audit().AuditTrail(ctx, "host:web-1")
	if err != nil || len(trail) != 1 || trail[0].Actor != "U1" || string(trail[0].Detail) != `{"decision":"allow"}` {
		t.Fatalf("AuditTrail = %+v, %v", trail, err)
	}
	if all, _ := s.Audit().AuditTrail(ctx, ""); len(all) != 2 {
		t.Errorf("whole trail has %d entries; want 2", len(all))
	}
	if _, err := s.write.Exec(`UPDATE audit SET actor = 'mallory'`); err == nil {
		t.Error("audit row was updated")
	}
	if _, err := s.write.Exec(`DELETE FROM audit`); err == nil {
		t.Error("audit row was deleted")
	}
}

func TestCompactMessagesArchivesTranscript(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "c", Thread: "t"})
	s.Sessions().AppendMessages(ctx, sess.ID, Message{Role: "user", Content: []byte(`"one"`)}, Message{Role: "assistant", Content: []byte(`"two"`)})
	out, err := s.Sessions().CompactMessages(ctx, sess.ID, Message{Role: "user", Content: []byte(`"summary"`)})
	if err != nil || len(out) != 1 || out[0].Seq != 3 {
		t.Fatalf("CompactMessages = %+v, %v; want one message at seq 3", out, err)
	}
	msgs, _ := s.Sessions().Messages(ctx, sess.ID)
	if len(msgs) != 1 || string(msgs[0].Content) != `"summary"` {
		t.Fatalf("history after compaction = %+v", msgs)
	}
	tr, err := s.Sessions().Transcripts(ctx, sess.ID)
	if err != nil || len(tr) != 1 || len(tr[0].Messages) != 2 || string(tr[0].Messages[1].Content) != `"two"` {
		t.Fatalf("Transcripts = %+v, %v", tr, err)
	}
}

func TestWebMessagesUpsertKeepsTheNewest(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	m := archive.Message{ID: "m1", Channel: "ops", Thread: "m1", User: "alice", Message: []byte(`{"text":"a"}`), Seq: 1, Created: clock.Now(), Updated: clock.Now()}
	s.Web().Save(ctx, m)
	m.Message, m.Seq, m.Finished = []byte(`{"text":"ab"}`), 3, true
	s.Web().Save(ctx, m)
	m.Message, m.Seq = []byte(`{"text":"stale"}`), 2
	s.Web().Save(ctx, m)
	got, err := s.Web().WebMessages(ctx)
	if err != nil || len(got) != 1 || string(got[0].Message) != `{"text":"ab"}` || got[0].Seq != 3 || !got[0].Finished {
		t.Fatalf("WebMessages = %+v, %v", got, err)
	}
}

func TestOpenInAMissingFolderSaysWhatToDo(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "no", "such", "opsbot.db")})
	if err == nil || !strings.Contains(err.Error(), "set store.path") {
		t.Errorf("err = %v", err)
	}
}

// TestRunningCommandsSurviveAReopen: what is recorded as running is there
// for the next process, until removed.
func TestRunningCommandsSurviveAReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsbot.db")
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Jobs().AddRunning(ctx, RunningCommand{Host: "local", PID: 4242, Start: 1 << 40, Boot: "b", Command: "sleep 300", Label: "web/ops/t1", OwnerPID: 77, OwnerStart: 5, OwnerBoot: "b"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Jobs().AddRunning(ctx, RunningCommand{Host: "web-1", Token: "0123456789abcdef", Command: "sleep 5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Jobs().RemoveRunning(ctx, b); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, Config{Path: path}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	left, err := s.Jobs().RunningCommands(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != a || left[0].PID != 4242 || left[0].Start != 1<<40 || left[0].Label != "web/ops/t1" || left[0].Command != "sleep 300" ||
		left[0].OwnerPID != 77 || left[0].OwnerStart != 5 || left[0].OwnerBoot != "b" {
		t.Errorf("after a reopen: %+v", left)
	}
}
