package bot

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// Every line whose first word is `approvals` is answered at once with the
// usage when its form is not one the command knows; none reaches the
// model (a try-out saw `approvals revoke x` answered by the model).
func TestApprovalsLinesOfAnyFormAreTheCommand(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){text("the model answered")}}
	h := newHarness(t, approvals.GateConfig{}, m)
	for i, line := range []string{"approvals revoke x", "approvals revoke", "approvals revoke 1 2", "approvals foo", "Approvals revoke -3"} {
		h.say("alice", "t1", line)
		h.eventually("the usage for "+line, func() bool { return h.count("t1", approvalsUsage) == i+1 })
	}
	if n := len(m.requests()); n != 0 {
		t.Errorf("the model was asked %d times for approvals lines: %s", n, h.dump())
	}
}

// grantsThread is `approvals` over a real store, where the thread's grant
// is the store's second: its number in the thread (1) differs from its
// id, the N of its audit subject grant:N.
func grantsThread(t *testing.T) (*commands, *fakeConn, *store.Store, int64, approvals.Grant) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	var sessions [2]int64
	var g approvals.Grant
	for i, thread := range []string{"other", "t1"} {
		s, _, err := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: thread})
		if err != nil {
			t.Fatal(err)
		}
		sessions[i] = s.ID
		g, err = st.Approvals().CreateGrant(ctx, approvals.Grant{SessionID: s.ID, Hosts: "local", Command: "systemctl restart svc-1",
			By: "web:bob", Approval: "a" + thread, CreatedAt: now, ExpiresAt: now.Add(approvals.GrantFor)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if g.ID == g.Number {
		t.Fatalf("the fixture's grant has id %d and number %d; they must differ", g.ID, g.Number)
	}
	conn := newFakeConn(connectors.Limits{})
	conn.name = "web"
	return &commands{grants: st.Approvals(), out: NewPlatforms(nil, nil, conn)}, conn, st, sessions[1], g
}

// The number people read for a grant — in the news of it, in `approvals`
// and in the revoke's answer — is the N of its audit subject grant:N, and
// `approvals revoke N` takes that number.
func TestGrantNumbersPeopleSeeAreTheAuditsNumbers(t *testing.T) {
	t.Parallel()
	c, conn, st, session, g := grantsThread(t)
	ctx := context.Background()
	ev := connectors.Event{Platform: "web", Channel: "ops", Thread: "t1", User: connectors.User{ID: "carol"}}
	sess := agent.SessionInfo{ID: session}
	id := strings.TrimPrefix(fmtGrant(g.ID), "grant:")
	if news := grantNews(g); !strings.Contains(news, "(grant "+id+"; `approvals revoke "+id+"` ends it)") {
		t.Errorf("the news of grant:%s reads %q", id, news)
	}
	c.approvalsCommand(ctx, ev, sess, "")
	c.approvalsCommand(ctx, ev, sess, "revoke 1")
	c.approvalsCommand(ctx, ev, sess, "revoke "+id)
	msgs := conn.thread("t1")
	if len(msgs) != 3 {
		t.Fatalf("%d answers, want 3", len(msgs))
	}
	if list := msgs[0].msg.Text; !strings.Contains(list, "grant "+id+": commands like `systemctl restart svc-1`") {
		t.Errorf("`approvals` lists:\n%s", list)
	}
	if got := msgs[1].msg.Text; got != "This thread has no active grant 1; `approvals` lists them." {
		t.Errorf("revoke 1 (the thread's ordinal, not a grant's number) answered %q", got)
	}
	if got := msgs[2].msg.Text; got != "Grant "+id+" revoked: similar commands ask for approval again." {
		t.Errorf("revoke %s answered %q", id, got)
	}
	trail, err := st.Audit().AuditTrail(ctx, fmtGrant(g.ID))
	if err != nil || len(trail) != 2 || trail[1].Action != "grant.revoke" {
		t.Errorf("the audit of %s = %+v, %v; want its creation and its revoke", fmtGrant(g.ID), trail, err)
	}
}

func fmtGrant(id int64) string { return "grant:" + strconv.FormatInt(id, 10) }
