package bot

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// An event the database cannot take within recordWait (it is locked by
// another writer) is refused, not acknowledged unrecorded: Handle returns
// within the platform's ack deadline with an error that says why, and the
// bot never acts on it, also once the lock is gone. Before, Handle logged
// the late write and acted on the event anyway, while the platform had
// been acknowledged for an event not on record (issue 12, item 0).
func TestEventNotRecordedInTimeIsRefusedAndNotActedOn(t *testing.T) {
	conn := newFakeConn(webLimits)
	conn.name = "web"
	dir := t.TempDir()
	b, stop := startBot(t, dir, conn, botOptions{busyTimeout: time.Hour})
	t.Cleanup(stop)

	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "bot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(`INSERT INTO events_seen (platform, event_id, seen_at) VALUES ('x', 'lock', 0)`); err != nil {
		t.Fatal(err)
	}

	returned := make(chan error)
	go func() {
		returned <- b.Handle(context.Background(), connectors.Event{ID: "e1", Kind: connectors.EventMessage, Platform: "web",
			Channel: "ops", Thread: "t1", User: connectors.User{ID: "alice", Name: "alice"}, Text: "help", Mention: true})
	}()
	guard := time.NewTimer(time.Minute) // the writer would wait an hour
	defer guard.Stop()
	select {
	case err = <-returned:
	case <-guard.C:
		t.Fatal("Handle waited for the database lock: a connector's goroutine is held up past its ack deadline")
	}
	if !errors.Is(err, connectors.ErrNotRecorded) || !strings.Contains(err.Error(), "did not answer within 2s") {
		t.Errorf("Handle of an event the database did not take in time: %v; want ErrNotRecorded saying why", err)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}
	h.settled("t1") // a help asked now, behind the refused one if it had been queued
	if n := h.count("t1", "`help` — this text"); n != 1 {
		t.Errorf("help answered %d times, want 1 (the refused event must not be acted on): %s", n, h.dump())
	}
}

// An event the database refuses (its disk is full: a real tmpfs, filled)
// is refused to the connector in words — the disk is full — and not acted
// on; once space returns, the next one is taken. Before, Handle logged
// the failed write and acted on the event unrecorded.
func TestEventTheDiskRefusesIsNotActedOn(t *testing.T) {
	t.Parallel()
	disk := filepath.Join(t.TempDir(), "disk")
	mountTmpfs(t, disk, "4m")
	h := newHarnessWith(t, botOptions{dbDir: disk})
	h.settled("t1") // the thread's session exists before the disk fills
	fill(t, disk)
	err := h.bot.Handle(context.Background(), connectors.Event{ID: "full-1", Kind: connectors.EventMessage, Platform: "web",
		Channel: "ops", Thread: "t1", User: connectors.User{ID: "alice", Name: "alice"}, Text: "help", Mention: true})
	if !errors.Is(err, connectors.ErrNotRecorded) || !strings.Contains(err.Error(), "the disk is full") {
		t.Errorf("Handle on a full disk: %v; want ErrNotRecorded saying the disk is full", err)
	}
	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	h.settled("t1")
	if n := h.count("t1", "`help` — this text"); n != 2 {
		t.Errorf("help answered %d times, want 2 (before the disk filled, and after; not the refused one): %s", n, h.dump())
	}
}

// slowDownConn asks every edit to wait an hour.
type slowDownConn struct{ *fakeConn }

func (c slowDownConn) Edit(context.Context, connectors.Ref, connectors.Message) error {
	return &connectors.RateLimitError{RetryAfter: time.Hour}
}

// Shutdown is bounded: an answer waiting out an hour's Retry-After gets
// the grace, then its wait ends, and Close returns.
func TestCloseIsBoundedByTheGrace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := slowDownConn{newFakeConn(connectors.Limits{MaxText: 3000, EditInterval: time.Second})}
		p, c := NewPlatforms(nil, nil, conn), &crew{}
		b := &Bot{platforms: p, crew: c, threads: newThreads(Config{}, c, p), inbox: &inbox{}, grace: 5 * time.Second, log: slog.Default()}
		d := connectors.Dest{Platform: "fake", Workspace: "W1", Channel: "C1", Thread: "T1"}
		r := render.NewRenderer(p.lifeCtx(context.Background()), conn, p.budget("fake", "W1"), nil, nil, d)
		c.do(func() { // a thread's worker, ending its answer
			r.Write("The disk")
			synctest.Wait()
			r.Write(" is full.")
			r.Close(context.Background(), nil)
		})
		time.Sleep(time.Minute) // the answer is waiting out its Retry-After
		start := time.Now()
		b.Close()
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("Close took %s with a grace of 5s", took)
		}
		if got := shown(conn.fakeConn, "T1"); got != "The disk" {
			t.Errorf("the thread shows %q", got)
		}
	})
}

// count is how many of the thread's messages contain s.
func (h *harness) count(thread, s string) int {
	n := 0
	for _, m := range h.conn.thread(thread) {
		if strings.Contains(m.msg.Text, s) {
			n++
		}
	}
	return n
}

// A message queued behind a running answer is in the inbox until its turn
// begins: a graceful stop (SIGTERM) no longer drops it, and the next start
// answers it, once. Before, queued messages lived in memory only: 10 of 10
// were lost on a stop (issue 12, item 0).
func TestQueuedMessageSurvivesAStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local sleep 30")
	h.eventually("the run to start", h.has("t1", "running `sleep 30`"))
	h.say("alice", "t1", "help")
	h.eventually("the queued note", h.has("t1", queuedNote))

	h.restart(botOptions{})
	h.eventually("the queued message answered after the restart", h.has("t1", "`help` — this text"))
	h.restart(botOptions{})
	h.settled("t1") // one more help, asked now
	if n := h.count("t1", "`help` — this text"); n != 2 {
		t.Errorf("help answered %d times, want 2 (the queued one once, then the new one): %s", n, h.dump())
	}
}

// A click acknowledged and not yet acted on when the process died is acted
// on by the next start, exactly once: the command it approves runs once,
// however often opsbot restarts after.
func TestRecordedClickIsActedOnOnceAfterARestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "runs.txt")
	h.say("alice", "t1", "run local echo ran >> "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	card := h.msg(ref)

	// A process that takes bob's click — Handle returned, so the
	// platform was answered — and dies before it routes it.
	h.restart(botOptions{held: true})
	var approve connectors.Button
	for _, btn := range card.msg.Buttons {
		if btn.ActionID == ActionApprove {
			approve = btn
		}
	}
	h.bot.Handle(context.Background(), connectors.Event{ID: "click-1", Kind: connectors.EventAction, Platform: "web", Channel: "ops",
		Thread: "t1", User: connectors.User{ID: "bob", Name: "bob"}, ActionID: approve.ActionID, Value: approve.Value, Ref: ref})

	h.restart(botOptions{})
	h.eventually("the approved command to run", func() bool { return runs(t, target) == 1 })
	h.settled("t1")
	h.restart(botOptions{})
	h.settled("t1")
	if n := runs(t, target); n != 1 {
		t.Errorf("the approved command ran %d times, want 1: %s", n, h.dump())
	}
}

// messageLog is a slog handler that hands each record's message to a
// channel, for a test to wait on a line as a supervisor would.
type messageLog struct{ msgs chan string }

func (l messageLog) Enabled(context.Context, slog.Level) bool { return true }
func (l messageLog) Handle(_ context.Context, r slog.Record) error {
	select {
	case l.msgs <- r.Message:
	default: // nobody waits for it
	}
	return nil
}
func (l messageLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l messageLog) WithGroup(string) slog.Handler      { return l }

// A restart logs SettledAfterStart once it has acted on what the previous
// run left — here a click on record, whose approved command runs — so
// that a supervisor (the kill loop) waits on that line instead of polling
// the database; when it comes, nothing on record is left to act on.
func TestSettledIsLoggedOnceTheRestartActedOnWhatItFound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "runs.txt")
	h.say("alice", "t1", "run local echo ran >> "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	card := h.msg(ref)
	h.restart(botOptions{held: true})
	for _, btn := range card.msg.Buttons {
		if btn.ActionID == ActionApprove {
			h.bot.Handle(context.Background(), connectors.Event{ID: "click-1", Kind: connectors.EventAction, Platform: "web", Channel: "ops",
				Thread: "t1", User: connectors.User{ID: "bob", Name: "bob"}, ActionID: btn.ActionID, Value: btn.Value, Ref: ref})
		}
	}

	lines := messageLog{msgs: make(chan string, 1000)}
	h.restart(botOptions{log: slog.New(lines)})
	guard := time.NewTimer(2 * time.Minute)
	defer guard.Stop()
	for settled := false; !settled; {
		select {
		case m := <-lines.msgs:
			settled = m == SettledAfterStart
		case <-guard.C:
			t.Fatalf("no %q within two minutes of the restart: %s", SettledAfterStart, h.dump())
		}
	}
	if n := runs(t, target); n != 1 {
		t.Errorf("when the restart said it settled, the approved command had run %d times, want 1", n)
	}
	if n, err := h.st.Inbox().Unsettled(context.Background()); err != nil || n != 0 {
		t.Errorf("when the restart said it settled, %d things on record were left to act on (%v)", n, err)
	}
}
