package bot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// sweeperFunc fakes the fleet's End, recording what it was asked to end.
type sweeperFunc struct {
	mu    sync.Mutex
	asked []hosts.Process
	end   func(hosts.Process) (bool, error)
}

func (s *sweeperFunc) End(_ context.Context, p hosts.Process) (bool, error) {
	s.mu.Lock()
	s.asked = append(s.asked, p)
	s.mu.Unlock()
	return s.end(p)
}

// TestRecoverEndsWhatACrashLeftAndTellsTheThread: each command a dead
// process left on record is ended and its thread told how it went; a
// live process's commands are left alone. (The real kill -9 of `opsbot
// run` is cmd/opsbot's TestKilledBotLeavesNoCommandRunning.)
func TestRecoverEndsWhatACrashLeftAndTellsTheThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	ctx := context.Background()
	dead := store.RunningCommand{OwnerPID: 1 << 22, OwnerStart: 1, OwnerBoot: "a boot long gone"}
	add := func(c store.RunningCommand) int64 {
		id, err := h.st.Jobs().AddRunning(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	rows := []store.RunningCommand{
		{Host: "local", PID: 4242, Command: "sleep 300", Label: "web/ops/t1"},
		{Host: "local", PID: 4343, Command: "tail -f x", Label: "web/ops/t2"},
		{Host: "web-1", Token: "0123456789abcdef", Command: "sleep 9", Label: "web/ops/t3"},
	}
	for _, r := range rows {
		r.OwnerPID, r.OwnerStart, r.OwnerBoot = dead.OwnerPID, dead.OwnerStart, dead.OwnerBoot
		add(r)
	}
	me := hosts.Self()
	live := add(store.RunningCommand{Host: "local", PID: 4444, Command: "sleep 1", Label: "web/ops/t4",
		OwnerPID: me.PID, OwnerStart: me.Start, OwnerBoot: me.Boot})

	sw := &sweeperFunc{end: func(p hosts.Process) (bool, error) {
		switch p.Command {
		case "sleep 300":
			return true, nil
		case "sleep 9":
			return false, context.DeadlineExceeded
		}
		return false, nil
	}}
	h.restart(botOptions{sweeper: sw})

	for thread, want := range map[string]string{
		"t1": "Cut off: `sleep 300` on local was still running when opsbot restarted; it has been stopped, and was not re-run.",
		"t2": "Cut off: `tail -f x` on local was running when opsbot stopped; it had ended by the restart",
		"t3": "Whether it still runs could not be checked (the host did not answer in time)",
	} {
		h.eventually("the cut-off note in "+thread, h.has(thread, want))
	}
	if h.has("t4", "Cut off")() {
		t.Errorf("a live process's command was reported cut off")
	}
	sw.mu.Lock()
	asked := len(sw.asked)
	sw.mu.Unlock()
	if asked != 3 {
		t.Errorf("the sweep was asked to end %d commands, want 3 (not the live process's)", asked)
	}
	left, err := h.st.Jobs().RunningCommands(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != live {
		t.Errorf("left on record: %+v; want only the live process's command", left)
	}
}

// TestCutOffWordsShowNoGoErrors: the reason a sweep failed is said in a
// person's words.
func TestCutOffWordsShowNoGoErrors(t *testing.T) {
	t.Parallel()
	text := cutOffText(store.RunningCommand{Host: "db-1", Command: "vacuumdb --all"}, false,
		errors.New("hosts: db-1: dial tcp 10.0.0.9:22: connect: no route to host"))
	if strings.Contains(text, "dial tcp") || !strings.Contains(text, "the host could not be reached") {
		t.Errorf("cut-off note: %q", text)
	}
}

// fakeOrphanStore lists rows and fails as set.
type fakeOrphanStore struct {
	rows      []store.RunningCommand
	listErr   error
	removeErr error
}

func (f *fakeOrphanStore) RunningCommands(context.Context) ([]store.RunningCommand, error) {
	return f.rows, f.listErr
}
func (f *fakeOrphanStore) RemoveRunning(context.Context, int64) error { return f.removeErr }

// The sweep over fakes: a store that cannot list the running commands is
// logged and nothing is ended; one that cannot forget a swept command is
// logged, and the thread is still told.
func TestOrphansOverAFailingStore(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	out := &fakeOut{c: conn}
	sw := &sweeperFunc{end: func(hosts.Process) (bool, error) { return true, nil }}
	var logged strings.Builder
	st := &fakeOrphanStore{listErr: errors.New("disk I/O error")}
	o := &orphans{store: st, sweeper: sw, out: out, log: logTo(&logged)}
	o.end(t.Context())
	if len(sw.asked) != 0 || !strings.Contains(logged.String(), "find commands a crash left running") {
		t.Errorf("with no list: asked to end %v; logged %s", sw.asked, logged.String())
	}

	st.listErr, st.removeErr = nil, errors.New("disk I/O error")
	st.rows = []store.RunningCommand{{ID: 1, Host: "local", PID: 4242, Command: "sleep 300", Label: "fake/C1/T1",
		OwnerPID: 1 << 22, OwnerStart: 1, OwnerBoot: "a boot long gone"}}
	o.end(t.Context())
	if said := out.said(); len(sw.asked) != 1 || len(said) != 1 || !strings.Contains(said[0], "it has been stopped, and was not re-run") {
		t.Errorf("asked to end %v; the thread was told %q", sw.asked, said)
	}
	if !strings.Contains(logged.String(), "forget a swept command") {
		t.Errorf("a store that cannot forget is not logged: %s", logged.String())
	}
}
