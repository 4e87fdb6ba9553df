package bot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// fakeCommandStore is a commandStore whose answers the test sets.
type fakeCommandStore struct {
	jobs   []hosts.Job
	err    error
	forgot int64 // the session whose messages were deleted
}

func (f *fakeCommandStore) Jobs(context.Context, int64, int) ([]hosts.Job, error) {
	return f.jobs, f.err
}

func (f *fakeCommandStore) Job(_ context.Context, id int64) (hosts.Job, error) {
	for _, j := range f.jobs {
		if j.ID == id {
			return j, f.err
		}
	}
	return hosts.Job{}, store.ErrNotFound
}

func (f *fakeCommandStore) DeleteMessagesAfter(_ context.Context, session, _ int64) (int64, error) {
	f.forgot = session
	return 0, f.err
}

// fakeReplier records what the commands answered, on no platform.
type fakeReplier struct {
	said []string
}

func (f *fakeReplier) reply(_ context.Context, _ connectors.Event, text string) {
	f.said = append(f.said, connectors.PlainMentions(text))
}
func (f *fakeReplier) conn(string) (connectors.Connector, bool) { return nil, false }
func (f *fakeReplier) post(_ context.Context, _ connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	f.said = append(f.said, connectors.PlainMentions(m.Text))
	return connectors.Ref{}, nil
}

// The chat commands over fakes: each answers in words, a failing store is
// an internal error (an id, not the error), and a job is cancelled only by
// who started it or an approver.
func TestChatCommandsOverFakes(t *testing.T) {
	t.Parallel()
	sess := agent.SessionInfo{ID: 7}
	alice := connectors.Event{User: connectors.User{ID: "alice"}}
	mallory := connectors.Event{User: connectors.User{ID: "mallory"}}
	running := hosts.Job{ID: 3, SessionID: 7, Requester: "alice", Host: "web-1", Command: "sleep 60", State: "running"}
	tests := []struct {
		name       string
		ev         connectors.Event
		word, rest string
		store      fakeCommandStore
		want       string // in the answer
		failed     bool
	}{
		{"help", alice, "help", "", fakeCommandStore{}, "Mention me with a question", false},
		{"no jobs", alice, "jobs", "", fakeCommandStore{}, "No background jobs in this thread.", false},
		{"jobs", alice, "jobs", "", fakeCommandStore{jobs: []hosts.Job{running}}, "• job 3", false},
		{"jobs, the store failing", alice, "jobs", "", fakeCommandStore{err: errors.New("disk I/O error")}, "", true},
		{"job", alice, "job", "#3", fakeCommandStore{jobs: []hosts.Job{running}}, "sleep 60", false},
		{"job, not a number", alice, "job", "three", fakeCommandStore{}, "Usage: `job <id>`", false},
		{"another thread's job", alice, "job", "4", fakeCommandStore{jobs: []hosts.Job{{ID: 4, SessionID: 8}}}, "This thread has no job 4", false},
		{"cancel", alice, "cancel", "3", fakeCommandStore{jobs: []hosts.Job{running}}, "Cancelling job 3", false},
		{"cancel by someone else", mallory, "cancel", "3", fakeCommandStore{jobs: []hosts.Job{running}}, "Not cancelled: only @alice, who started job 3", false},
		{"cancel, not a number", alice, "cancel", "x", fakeCommandStore{}, "Usage: `cancel` stops the running answer", false},
		{"cancel a job not running", alice, "cancel", "5", fakeCommandStore{jobs: []hosts.Job{{ID: 5, SessionID: 7, Requester: "alice"}}}, "Job 5 is not running.", false},
		{"hosts", alice, "hosts", "", fakeCommandStore{}, "• `web-1` — groups: web, prod", false},
		{"health, none scheduled", alice, "health", "", fakeCommandStore{}, "No health checks are scheduled", false},
		{"reset", alice, "reset", "", fakeCommandStore{}, "this thread's conversation is forgotten", false},
		{"reset, the store failing", alice, "reset", "", fakeCommandStore{err: errors.New("database is locked")}, "", true},
	}
	for _, tt := range tests {
		out := &fakeReplier{}
		st := tt.store
		var logged strings.Builder
		c := &commands{jobRecords: &st, forget: st.DeleteMessagesAfter, hosts: []agent.HostInfo{{Name: "web-1", Groups: []string{"web", "prod"}}}, out: out,
			cancel: func(id int64) bool { return id == 3 }, log: logTo(&logged),
			mayApprove: func(connectors.Event) bool { return false }}
		if !c.answer(t.Context(), tt.ev, sess, tt.word, tt.rest) {
			t.Errorf("%s: %q is no command", tt.name, tt.word)
			continue
		}
		switch {
		case tt.failed && (len(out.said) != 1 || !strings.HasPrefix(out.said[0], "Internal error (id ") || strings.Contains(out.said[0], tt.store.err.Error()) ||
			!strings.Contains(logged.String(), tt.store.err.Error())):
			t.Errorf("%s: said %q, logged %q; want one internal error, its id said and the error logged", tt.name, out.said, logged.String())
		case !tt.failed && (len(out.said) != 1 || !strings.Contains(out.said[0], tt.want)):
			t.Errorf("%s: said %q; want %q", tt.name, out.said, tt.want)
		}
		if tt.word == "reset" && st.forgot != 7 {
			t.Errorf("%s: forgot session %d's messages; want 7's", tt.name, st.forgot)
		}
	}
	if (&commands{}).answer(t.Context(), alice, sess, "why", "is the disk full?") {
		t.Error("a question was taken for a command")
	}
}

// `approvals` lists this channel's waiting requests from the real store:
// the command and host, who asked, who may approve, the votes and when it
// expires; never an internal id, nor another channel's request.
func TestApprovalsCommandListsThisChannelsRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t0", "approvals")
	h.eventually("the empty list", h.has("t0", "Nothing waits for approval in this channel."))

	ctx := context.Background()
	st := storeOf(h.bot)
	here, err := st.Approvals().CreateApproval(ctx, approvals.Approval{Hash: "h1", Platform: "web", Channel: "ops", Host: "web-1",
		Command: "systemctl restart nginx", Requester: "web:carol", Quorum: 2, ExpiresAt: time.Now().Add(12*time.Minute + 20*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Approvals().RecordVote(ctx, here.ID, "web:bob", "approve"); err != nil {
		t.Fatal(err)
	}
	elsewhere, err := st.Approvals().CreateApproval(ctx, approvals.Approval{Hash: "h2", Platform: "web", Channel: "private", Host: "db-1",
		Command: "reboot", Requester: "web:dave", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	h.say("alice", "t1", "approvals")
	h.eventually("the list", h.has("t1", "Waiting for approval in this channel:"))
	m, _, _ := h.find("t1", "Waiting for approval")
	got := connectors.PlainMentions(m.msg.Text)
	want := "Waiting for approval in this channel:\n• `systemctl restart nginx` on `web-1` — asked by @carol\n" +
		"   may approve: @alice or @bob · votes: 1 of 2 approvals (@bob) · expires in 12 minutes"
	if got != want {
		t.Errorf("approvals:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, here.ID) || strings.Contains(got, elsewhere.ID) || strings.Contains(got, "reboot") {
		t.Errorf("an id or another channel's request in the answer: %q", got)
	}
}
