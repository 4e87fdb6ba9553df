package bot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// fakeRecoveryStore is what a crash left, as the test sets it.
type fakeRecoveryStore struct {
	streaming []store.PostedMessage
	turns     []store.Turn
	jobs      []hosts.Job
	sessions  map[int64]store.Session
	err       error // every read fails with it

	finished    []int64
	interrupted []int64
}

func (f *fakeRecoveryStore) StreamingMessages(context.Context) ([]store.PostedMessage, error) {
	return f.streaming, f.err
}
func (f *fakeRecoveryStore) FinishStreaming(_ context.Context, id int64) error {
	f.finished = append(f.finished, id)
	return nil
}
func (f *fakeRecoveryStore) RunningTurns(context.Context) ([]store.Turn, error) {
	return f.turns, f.err
}
func (f *fakeRecoveryStore) EndTurn(_ context.Context, id int64, st store.TurnStatus) (bool, error) {
	if st == store.TurnInterrupted {
		f.interrupted = append(f.interrupted, id)
	}
	return true, nil
}
func (f *fakeRecoveryStore) Session(_ context.Context, id int64) (store.Session, error) {
	s, ok := f.sessions[id]
	if !ok {
		return s, errors.New("no such session")
	}
	return s, nil
}
func (f *fakeRecoveryStore) InterruptRunningJobs(context.Context) ([]hosts.Job, error) {
	return f.jobs, f.err
}

// onePlatform is the platforms of a bot with the fake connector alone.
type onePlatform struct{ c *fakeConn }

func (p onePlatform) conn(name string) (connectors.Connector, bool) { return p.c, name == p.c.name }
func (p onePlatform) reply(ctx context.Context, ev connectors.Event, text string) {
	p.post(ctx, destOf(ev), connectors.Message{Text: text})
}
func (p onePlatform) post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return p.c.Post(ctx, d, m)
}

// Recovery over fakes: an answer left mid-stream ends with the note, one
// whose post never returned gets the note in its thread, one on a platform
// not configured now is kept for later; running turns end interrupted,
// and a thread whose turn had shown nothing yet is told (once), one whose
// answer carries the note is not told twice; and a store that fails is
// logged, not a panic.
func TestRecoveryFinishesWhatACrashLeft(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	ref, _ := conn.Post(t.Context(), connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, connectors.Message{Text: "Checking the di"})
	st := &fakeRecoveryStore{
		streaming: []store.PostedMessage{
			{ID: 1, Platform: "fake", Channel: "C1", Thread: "T1", MessageID: ref.ID, Text: "Checking the di"},
			{ID: 2, Platform: "fake", Channel: "C1", Thread: "T2", MessageID: "pending-2"},
			{ID: 3, Platform: "slack", Channel: "C9", Thread: "T9", MessageID: "1700000000.1"},
		},
		turns: []store.Turn{{ID: 5, SessionID: 1}, {ID: 6, SessionID: 2}, {ID: 7, SessionID: 2}, {ID: 8, SessionID: 3}},
		sessions: map[int64]store.Session{
			1: {ID: 1, ThreadKey: store.ThreadKey{Platform: "fake", Channel: "C1", Thread: "T1"}},
			2: {ID: 2, ThreadKey: store.ThreadKey{Platform: "fake", Channel: "C1", Thread: "T3"}},
			3: {ID: 3, ThreadKey: store.ThreadKey{Platform: "slack", Channel: "C9", Thread: "T8"}},
		},
		jobs: []hosts.Job{{ID: 9, Host: "web-1"}},
	}
	var logged strings.Builder
	r := &recovery{store: st, interruptJobs: st.InterruptRunningJobs, out: onePlatform{conn}, log: slog.New(slog.NewTextHandler(&logged, nil))}
	r.run(t.Context())
	if m := conn.thread("T1"); len(m) != 1 || m[0].msg.Text != "Checking the di"+interruptedNote {
		t.Errorf("the answer cut short shows %+v", m)
	}
	if m := conn.thread("T2"); len(m) != 1 || !strings.Contains(m[0].msg.Text, "interrupted: opsbot restarted") {
		t.Errorf("the thread of an answer whose post never returned: %+v", m)
	}
	if m := conn.thread("T3"); len(m) != 1 || m[0].msg.Text != silentNote {
		t.Errorf("the thread of a question cut before any answer showed: %+v", m)
	}
	if !slices.Equal(st.finished, []int64{1, 2}) || !slices.Equal(st.interrupted, []int64{5, 6, 7, 8}) {
		t.Errorf("finished %v (want 1, 2: slack's is kept), interrupted turns %v", st.finished, st.interrupted)
	}
	if !strings.Contains(logged.String(), "job interrupted by restart") {
		t.Errorf("the interrupted job is not reported: %s", logged.String())
	}

	logged.Reset()
	broken := &fakeRecoveryStore{err: errors.New("disk I/O error")}
	(&recovery{store: broken, interruptJobs: broken.InterruptRunningJobs, out: onePlatform{conn}, log: slog.New(slog.NewTextHandler(&logged, nil))}).run(t.Context())
	for _, want := range []string{"find interrupted answers", "find interrupted turns", "interrupt jobs"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("a failing store is not logged (%q): %s", want, logged.String())
		}
	}
}

// A restart cuts a `run` waiting for its approval: the answer's last form
// says it was interrupted and no longer claims to wait ("waiting for
// approval" under a message that waits for nothing any more), before and
// after the new process recovers (real store).
func TestRestartNoteDropsTheWaitingLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	askAndRestart(h, botOptions{})
	h.settled("t1")
	m, _, ok := h.find("t1", "interrupted: opsbot is restarting")
	if !ok {
		t.Fatalf("no restart note:\n%s", h.dump())
	}
	if strings.Contains(m.msg.Context, "waiting for approval") {
		t.Errorf("the interrupted answer still says %q", m.msg.Context)
	}
	if len(m.msg.Buttons) != 0 {
		t.Errorf("the interrupted answer keeps buttons %+v", m.msg.Buttons)
	}
}

// cutRefusing is a platform that reads a cut answer back (cutEnder) and
// refuses the first tries with a rate limit.
type cutRefusing struct {
	*fakeConn
	refuse int
	tries  int
}

func (c *cutRefusing) EndCut(ctx context.Context, ref connectors.Ref, stored, note string) error {
	c.tries++
	if c.tries <= c.refuse {
		return &connectors.RateLimitError{RetryAfter: time.Second}
	}
	return c.Edit(ctx, ref, connectors.Message{Text: stored + note})
}

// An answer whose finalizing fails (a rate limit) keeps its record open
// and is tried again, with growing pauses, until it worked; only then is
// its record closed.
func TestRecoveryRetriesUntilTheAnswerIsEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &cutRefusing{fakeConn: newFakeConn(connectors.Limits{MaxText: 4000}), refuse: 3}
		ref, _ := conn.Post(t.Context(), connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, connectors.Message{Text: "Checking"})
		st := &fakeRecoveryStore{streaming: []store.PostedMessage{{ID: 1, Platform: "fake", Channel: "C1", Thread: "T1", MessageID: ref.ID, Text: "Checking"}}}
		r := &recovery{store: st, out: cutPlatform{onePlatform{conn.fakeConn}, conn}, log: slog.New(slog.DiscardHandler)}
		r.run(t.Context())
		if len(st.finished) != 0 {
			t.Fatalf("the record of an answer not ended yet was closed: %v", st.finished)
		}
		r.retry(t.Context())
		if conn.tries != 4 || !slices.Equal(st.finished, []int64{1}) {
			t.Errorf("%d tries, records closed %v; want 4 tries, then record 1 closed", conn.tries, st.finished)
		}
		if m := conn.thread("T1"); len(m) != 1 || m[0].msg.Text != "Checking"+interruptedNote {
			t.Errorf("the answer shows %+v", m)
		}
	})
}

// cutPlatform is onePlatform whose connector is c.
type cutPlatform struct {
	onePlatform
	c connectors.Connector
}

func (p cutPlatform) conn(name string) (connectors.Connector, bool) { return p.c, name == p.c.Name() }
