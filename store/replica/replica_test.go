package replica

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store/replica/replicatest"
)

// sidecar starts a sidecar as the chart runs it, and returns settings
// that reach it.
func sidecar(t *testing.T, replicas string) Settings {
	t.Helper()
	sock, _ := replicatest.Sidecar(t, t.TempDir())
	return Settings{Replica: "file://" + replicas, Socket: sock, Bin: replicatest.Binary(t), FollowInterval: 100 * time.Millisecond}
}

// leaderDB is a WAL database with a table of rows, as the store's.
func leaderDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE rows (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func insert(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO rows VALUES (?)`, n); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM rows`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCatchUpFromTheWarmCopy: a leader of generation 3 replicates; the
// standby's copy follows it; generation 4 led and died before it
// replicated anything. The leader of generation 5 takes the state of
// generation 3, every row synced, from its warm copy.
func TestCatchUpFromTheWarmCopy(t *testing.T) {
	ctx := context.Background()
	replicas := t.TempDir()
	s := sidecar(t, replicas)
	side := NewSidecar(s)
	old := filepath.Join(t.TempDir(), "opsbot.db")
	db := leaderDB(t, old)
	insert(t, db, 1)
	if err := side.Register(ctx, old, s.Generation(3)); err != nil {
		t.Fatal(err)
	}
	if err := side.Register(ctx, old, s.Generation(3)); err == nil {
		t.Error("a second Register of one database was taken: it would go on replicating to the first replica")
	}
	if err := side.Sync(ctx, old); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	next := filepath.Join(t.TempDir(), "opsbot.db")
	warm := NewFollower(s, next+".standby", log)
	if err := warm.Follow(ctx, 3, s.Generation(3)); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 50; i++ {
		insert(t, db, i)
	}
	if err := side.Sync(ctx, old); err != nil {
		t.Fatal(err)
	}
	from, err := CatchUp(ctx, s, 5, next, warm, 30*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	if from != 3 {
		t.Errorf("caught up from generation %d, want 3 (4 replicated nothing)", from)
	}
	if n := count(t, next); n != 50 {
		t.Errorf("the new leader's database has %d rows, want the 50 synced", n)
	}
	if !strings.Contains(logs.String(), `by="the standby's copy"`) {
		t.Errorf("the catch-up did not use the warm copy:\n%s", logs.String())
	}
	// The new leader's sidecar replicates to generation 5: the next
	// promotion finds it, and restores it whole without a warm copy.
	side2 := NewSidecar(sidecar(t, replicas))
	ndb, _ := sql.Open("sqlite3", "file:"+next+"?_journal_mode=WAL")
	defer ndb.Close()
	insert(t, ndb, 51)
	if err := side2.Register(ctx, next, s.Generation(5)); err != nil {
		t.Fatal(err)
	}
	if err := side2.Sync(ctx, next); err != nil {
		t.Fatal(err)
	}
	third := filepath.Join(t.TempDir(), "opsbot.db")
	os.WriteFile(third, []byte("a stale file this pod had"), 0o600)
	logs.Reset()
	if from, err := CatchUp(ctx, s, 6, third, nil, time.Second, log); err != nil || from != 5 {
		t.Fatalf("CatchUp to generation 6: from %d, %v", from, err)
	}
	if n := count(t, third); n != 51 {
		t.Errorf("after a whole restore the database has %d rows, want 51", n)
	}
	if !strings.Contains(logs.String(), `by="a whole restore"`) {
		t.Errorf("want a whole restore without a warm copy:\n%s", logs.String())
	}
}

// TestCatchUpWithNoReplica: the first leader ever keeps its database.
func TestCatchUpWithNoReplica(t *testing.T) {
	s := Settings{Replica: "file://" + t.TempDir(), Bin: replicatest.Binary(t)}
	db := filepath.Join(t.TempDir(), "opsbot.db")
	os.WriteFile(db, []byte("kept"), 0o600)
	from, err := CatchUp(context.Background(), s, 2, db, nil, time.Second, slog.New(slog.DiscardHandler))
	if err != nil || from != -1 {
		t.Fatalf("CatchUp with no replica: from %d, %v", from, err)
	}
	if b, _ := os.ReadFile(db); string(b) != "kept" {
		t.Errorf("the database was changed: %q", b)
	}
}

// TestSidecarDown: a sidecar that is not there is said in words, and a
// missing binary names the setting.
func TestSidecarDown(t *testing.T) {
	s := Settings{Replica: "file:///r", Socket: filepath.Join(t.TempDir(), "none.sock"), SyncTimeout: time.Second}
	err := NewSidecar(s).Sync(context.Background(), "/data/opsbot.db")
	if err == nil || !strings.Contains(err.Error(), "does not answer on its control socket") {
		t.Errorf("Sync with no sidecar: %v", err)
	}
	_, _, err = Binary{Path: filepath.Join(t.TempDir(), "litestream")}.Latest(context.Background(), "file:///r")
	if err == nil || !strings.Contains(err.Error(), "ha.litestream.bin") {
		t.Errorf("Latest with no binary: %v", err)
	}
}

func TestSettings(t *testing.T) {
	for _, bad := range []string{"bucket/opsbot", "s3://bucket/x?region=eu", "::"} {
		if err := (Settings{Replica: bad}).Validate(); err == nil {
			t.Errorf("replica %q was taken", bad)
		}
	}
	if err := (Settings{Replica: "s3://bucket/opsbot/"}).Validate(); err != nil {
		t.Error(err)
	}
	if got := (Settings{Replica: "s3://bucket/opsbot/"}).Generation(7); got != "s3://bucket/opsbot/generation-000007" {
		t.Errorf("Generation(7) = %s", got)
	}
}

// TestReplicationOutlivesASidecarRestart: the sidecar dies (the kubelet
// restarts it) and forgets the database; the next Sync registers it
// again, and the replica holds every row, before and after. While it is
// down, Sync fails, says so, and Down counts.
func TestReplicationOutlivesASidecarRestart(t *testing.T) {
	ctx := context.Background()
	replicas, sideDir := t.TempDir(), t.TempDir()
	sock, side := replicatest.Sidecar(t, sideDir)
	s := Settings{Replica: "file://" + replicas, Socket: sock, Bin: replicatest.Binary(t), SyncTimeout: 5 * time.Second}
	path := filepath.Join(t.TempDir(), "opsbot.db")
	db := leaderDB(t, path)
	insert(t, db, 1)
	r := NewReplication(s, path, s.Generation(0))
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	side.Process.Kill()
	side.Wait()
	insert(t, db, 2)
	if err := r.Sync(ctx); !errors.Is(err, ErrSidecarDown) || r.Health() == nil || r.Down() <= 0 {
		t.Fatalf("Sync with the sidecar dead: %v (health %v, down %s)", err, r.Health(), r.Down())
	}
	replicatest.Sidecar(t, sideDir) // restarted, on the same socket, knowing nothing
	insert(t, db, 3)
	if err := r.Sync(ctx); err != nil {
		t.Fatalf("Sync after the sidecar restarted: %v", err)
	}
	if r.Health() != nil || r.Down() != 0 {
		t.Errorf("after a good Sync: health %v, down %s", r.Health(), r.Down())
	}
	out := filepath.Join(t.TempDir(), "restored.db")
	if err := (Binary{s.Bin}).Restore(ctx, s.Generation(0), out); err != nil {
		t.Fatal(err)
	}
	if n := count(t, out); n != 3 {
		t.Errorf("the replica holds %d rows, want the 3 written", n)
	}
}

// TestCatchUpLooksAtEveryEarlierGeneration: generation 2 replicated, and
// 37 leaders after it died before theirs did. The leader of generation
// 40 starts from generation 2's state, not empty (a bound of 32
// generations made it start empty). And a leader whose own generation's
// replica already holds a database (the Lease was recreated, so
// generations start again) refuses, in words, to overwrite it.
func TestCatchUpLooksAtEveryEarlierGeneration(t *testing.T) {
	ctx := context.Background()
	replicas := t.TempDir()
	s := sidecar(t, replicas)
	replicatedRow(t, s, 2)
	for g := int64(3); g < 40; g += 9 { // some died leaving a folder
		os.MkdirAll(filepath.Join(replicas, filepath.Base(s.Generation(g))), 0o755)
	}
	next := filepath.Join(t.TempDir(), "opsbot.db")
	from, err := CatchUp(ctx, s, 40, next, nil, time.Second, slog.New(slog.DiscardHandler))
	if err != nil || from != 2 {
		t.Fatalf("CatchUp to generation 40: from %d, %v; want generation 2's state", from, err)
	}
	if n := count(t, next); n != 1 {
		t.Errorf("the new leader has %d rows, want 1", n)
	}
	_, err = CatchUp(ctx, s, 2, filepath.Join(t.TempDir(), "opsbot.db"), nil, time.Second, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "an earlier leader wrote") || !strings.Contains(err.Error(), "ha.litestream.replica") {
		t.Errorf("CatchUp to a generation whose replica holds a database: %v", err)
	}
}

// TestReplicationSyncBeforeStartRegistersNothing: a Sync that comes
// before Start (a watcher's first tick on a slow start) does not
// register the database, so Start's own Register is not refused.
func TestReplicationSyncBeforeStartRegistersNothing(t *testing.T) {
	ctx := context.Background()
	s := sidecar(t, t.TempDir())
	path := filepath.Join(t.TempDir(), "opsbot.db")
	insert(t, leaderDB(t, path), 1)
	r := NewReplication(s, path, s.Generation(0))
	if err := r.Sync(ctx); !errors.Is(err, ErrNotReplicating) {
		t.Errorf("Sync before Start: %v; want the sidecar not to replicate it yet", err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatalf("Start after an early Sync: %v", err)
	}
}

// TestTakenLooksAboveAnEmptyGeneration: a reinstall's Lease starts at
// generation 0, whose replica holds nothing (its first leader died before
// it synced), while generation 2 holds the old install's database: it is
// taken, and generation 2 is the newest. Before, an empty generation 0
// said "not taken", and the new install started empty.
func TestTakenLooksAboveAnEmptyGeneration(t *testing.T) {
	ctx := context.Background()
	replicas := t.TempDir()
	s := sidecar(t, replicas)
	replicatedRow(t, s, 2)
	os.MkdirAll(filepath.Join(replicas, "generation-000000"), 0o755)
	if newest, taken, err := Taken(ctx, s, 0); err != nil || !taken || newest != 2 {
		t.Errorf("Taken(0) = %d, %v, %v; want generation 2, taken", newest, taken, err)
	}
	if newest, taken, err := Taken(ctx, s, 3); err != nil || taken {
		t.Errorf("Taken(3) = %d, %v, %v; want nothing from 3 on", newest, taken, err)
	}
}

// replicatedRow has generation gen's replica hold a database of one row,
// as a leader of that generation leaves it.
func replicatedRow(t *testing.T, s Settings, gen int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	insert(t, leaderDB(t, path), 1)
	if err := NewReplication(s, path, s.Generation(gen)).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}
