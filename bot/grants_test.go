package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// noGrants is a GrantStore that keeps nothing: the cards only ask
// whether grants are on.
type noGrants struct{ approvals.GrantStore }

// `approvals revoke N` is a command; other words after `approvals` are a
// question for the model.
func TestApprovalsRevokeIsACommand(t *testing.T) {
	t.Parallel()
	for rest, want := range map[string]bool{"": true, "revoke 2": true, "revoke #2": true, "REVOKE 3": true,
		"revoke": false, "revoke all": false, "for nginx?": false} {
		if got := commandLine("approvals", rest); got != want {
			t.Errorf("commandLine(approvals, %q) = %v, want %v", rest, got, want)
		}
	}
}

// The card offers "Approve similar" only where a grant can come of it:
// grants on, a pending request of a thread that one approval decides.
func TestCardOffersApproveSimilar(t *testing.T) {
	t.Parallel()
	a := approvals.Approval{ID: "0f3c9a", Host: "web-1", Command: "systemctl restart nginx", Requester: "web:alice",
		Quorum: 1, SessionID: 4, State: approvals.ApprovalPending, ExpiresAt: time.Now().Add(time.Minute)}
	on := &cards{grants: noGrants{}}
	for _, c := range []struct {
		name  string
		cards *cards
		edit  func(*approvals.Approval)
		want  bool
	}{
		{"pending in a thread", on, func(*approvals.Approval) {}, true},
		{"grants off", &cards{}, func(*approvals.Approval) {}, false},
		{"quorum 2", on, func(a *approvals.Approval) { a.Quorum = 2 }, false},
		{"no thread", on, func(a *approvals.Approval) { a.SessionID = 0 }, false},
		{"decided", on, func(a *approvals.Approval) { a.State = approvals.ApprovalApproved }, false},
	} {
		b := a
		c.edit(&b)
		m := c.cards.message(b)
		got := len(m.Buttons) == 3 && m.Buttons[2].ActionID == ActionApproveSimilar && m.Buttons[2].Label == approvals.GrantLabel
		if got != c.want {
			t.Errorf("%s: buttons %+v, want Approve similar %v", c.name, m.Buttons, c.want)
		}
	}
}

// The thread's news of a grant says who, what, where, for how long and
// how to end it, in words, with its short number only.
func TestGrantNews(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	got := grantNews(approvals.Grant{ID: 912, Number: 2, Hosts: "web-1,web-2", Command: "systemctl restart svc-1", By: "web:bob",
		Approval: "9f8e7d", CreatedAt: at, ExpiresAt: at.Add(approvals.GrantFor)})
	want := "@bob approved commands like `systemctl restart svc-1` on `web-1`, `web-2` in this thread for 30 minutes, without a new card (grant 2; `approvals revoke 2` ends it)."
	if plain := connectors.PlainMentions(got); plain != want {
		t.Errorf("news = %q\nwant %q", plain, want)
	}
	if strings.Contains(got, "912") || strings.Contains(got, "9f8e7d") {
		t.Errorf("an internal id in %q", got)
	}
}

// `approvals` and `approvals revoke N` answer at once while the thread's
// turn runs: a revoked grant must end before that turn's next command,
// not after the turn (a new user found the revoke "queued: runs after the
// current answer" while the grant stayed live).
func TestApprovalsAnswersWhileTheThreadIsBusy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run --timeout 30m local sleep 600")
	h.eventually("the run to start", h.has("t1", "running `sleep 600`"))
	h.say("bob", "t1", "approvals")
	h.eventually("the approvals list while the run runs", h.has("t1", "Nothing waits for approval"))
	h.say("bob", "t1", "approvals revoke 3")
	h.eventually("the revoke's answer while the run runs", h.has("t1", "Usage: `approvals revoke N`"))
	if _, _, ok := h.find("t1", QueuedNote); ok {
		t.Errorf("an approvals line was queued behind the run: %s", h.dump())
	}
	h.say("alice", "t1", "cancel")
	h.eventually("the run stopped", h.has("t1", "stopped by @alice"))
}
