package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// fakeNoticeStore holds notifications, sessions and jobs as the test sets
// them, and records what was marked.
type fakeNoticeStore struct {
	notes    []store.Notification
	sessions map[int64]store.Session
	jobs     map[int64]hosts.Job
	err      error // UndeliveredNotifications fails with it

	delivered, injected []int64
}

func (f *fakeNoticeStore) UndeliveredNotifications(context.Context, int, ...string) ([]store.Notification, error) {
	return f.notes, f.err
}
func (f *fakeNoticeStore) MarkDelivered(_ context.Context, ids ...int64) (int64, error) {
	f.delivered = append(f.delivered, ids...)
	return int64(len(ids)), nil
}
func (f *fakeNoticeStore) DeliverNotification(_ context.Context, id int64, _ string, turn []byte) (int64, error) {
	f.delivered = append(f.delivered, id)
	if turn == nil {
		return 0, nil
	}
	f.injected = append(f.injected, id)
	return 1000 + id, nil
}
func (f *fakeNoticeStore) Session(_ context.Context, id int64) (store.Session, error) {
	if s, ok := f.sessions[id]; ok {
		return s, nil
	}
	return store.Session{}, store.ErrNotFound
}
func (f *fakeNoticeStore) Job(_ context.Context, id int64) (hosts.Job, error) {
	if j, ok := f.jobs[id]; ok {
		return j, nil
	}
	return hosts.Job{}, store.ErrNotFound
}

// Job notices over fakes: each is posted into its thread and marked; one
// with no thread is marked without a post; one whose platform this
// process does not serve is left for the one that does; one whose post fails stays
// for the next round; with wake, the agent is woken once per ended job.
func TestJobNoticesDeliver(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	thread := func(id string) store.Session {
		return store.Session{ThreadKey: store.ThreadKey{Platform: "fake", Channel: "C1", Thread: id}}
	}
	st := &fakeNoticeStore{
		notes: []store.Notification{
			{ID: 1, SessionID: 10, JobID: 100, Text: "job 100 on web-1: exit 0"},
			{ID: 2, Text: "a job of no thread"},
			{ID: 3, SessionID: 30, Text: "a job of a terminal session"},
			{ID: 4, SessionID: 40, Text: "a job whose notice is longer than the platform takes", JobID: 400},
			{ID: 5, SessionID: 50, Text: "a job whose session is gone"},
		},
		sessions: map[int64]store.Session{10: thread("T1"), 30: {ThreadKey: store.ThreadKey{Platform: "console"}}, 40: thread("T4")},
		jobs:     map[int64]hosts.Job{100: {ID: 100, Requester: "alice"}},
	}
	conn.limits.MaxText = 30 // the fourth notice is too long for the platform: its post fails
	var woken []int64
	n := &jobNotices{store: st, session: st.Session, job: st.Job, out: onePlatform{conn}, log: slog.New(slog.DiscardHandler),
		turn: func(_ store.Session, j hosts.Job) connectors.Event { return connectors.Event{Text: fmt.Sprint(j.ID)} },
		queue: func(ev connectors.Event, _ int64) {
			id, _ := strconv.ParseInt(ev.Text, 10, 64)
			woken = append(woken, id)
		}}
	n.deliver(t.Context())
	if m := conn.thread("T1"); len(m) != 1 || m[0].msg.Text != "🔔 job 100 on web-1: exit 0" {
		t.Errorf("the notice in its thread: %+v", m)
	}
	if !slices.Equal(st.delivered, []int64{1, 2}) {
		t.Errorf("marked delivered %v; want 1, 2 (3's platform is another process's, 4's post failed, 5's session is gone)", st.delivered)
	}
	if !slices.Equal(woken, []int64{100}) || !slices.Equal(st.injected, []int64{1}) {
		t.Errorf("woke the agent for %v, injected %v; want job 100 once", woken, st.injected)
	}

	var logged strings.Builder
	broken := &fakeNoticeStore{err: errors.New("disk I/O error")}
	(&jobNotices{store: broken, session: broken.Session, job: broken.Job, out: onePlatform{conn}, log: slog.New(slog.NewTextHandler(&logged, nil))}).deliver(t.Context())
	if !strings.Contains(logged.String(), "notifications") || len(broken.delivered) != 0 {
		t.Errorf("a failing store: logged %q, delivered %v", logged.String(), broken.delivered)
	}
}
