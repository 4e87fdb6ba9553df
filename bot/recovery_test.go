package bot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

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
// not configured now is kept for later; running turns end interrupted;
// and a store that fails is logged, not a panic.
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
		turns: []store.Turn{{ID: 5}, {ID: 6}},
		jobs:  []hosts.Job{{ID: 9, Host: "web-1"}},
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
	if !slices.Equal(st.finished, []int64{1, 2}) || !slices.Equal(st.interrupted, []int64{5, 6}) {
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
