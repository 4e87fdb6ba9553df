package approvals_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// grantRig is a Gate on the real SQLite store, with a thread (session)
// its requests belong to.
type grantRig struct {
	st      *store.Store
	gate    *approvals.Gate
	session int64
	now     time.Time
	mu      sync.Mutex
}

func newGrantRig(t *testing.T, cfg approvals.GateConfig) *grantRig {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &grantRig{st: st, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	st.Now = r.clock
	sess, _, err := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	r.session = sess.ID
	cfg.Approvers = []approvals.ApproverConfig{{Web: approvals.UserList{Users: []string{"*"}}}}
	r.gate = approvals.NewGate(st.Approvals(), cfg, approvals.GateOptions{Now: r.clock})
	return r
}

func (r *grantRig) clock() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }

func (r *grantRig) advance(d time.Duration) { r.mu.Lock(); r.now = r.now.Add(d); r.mu.Unlock() }

func (r *grantRig) open(t *testing.T, hosts, command string) approvals.Approval {
	t.Helper()
	a, err := r.gate.Open(context.Background(), approvals.Request{Host: hosts, Command: command, Channel: "ops", SessionID: r.session,
		Requester: approvals.Person{Platform: "web", ID: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The requester's own "Approve similar" grants nothing and approves
// nothing, even where they may approve their own requests; a request
// that needs two approvals cannot be granted by one person; someone
// else's click approves the request and grants.
func TestGrantSimilarNeedsAnotherPersonAndQuorumOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newGrantRig(t, approvals.GateConfig{AllowSelfApproval: true})
	a := r.open(t, "web-1,web-2", "systemctl restart svc-1")
	res, g, err := r.gate.GrantSimilar(ctx, a.ID, approvals.Person{Platform: "web", ID: "alice"}, r.st.Approvals())
	if err != nil || res.Status != approvals.VoteRefused || g.ID != 0 || res.Approval.State != approvals.ApprovalPending {
		t.Fatalf("requester's click = %+v, grant %+v, %v; want refused, no grant, still pending", res, g, err)
	}
	if !strings.Contains(res.Reason, "someone else") {
		t.Errorf("refusal %q does not say someone else must approve", res.Reason)
	}
	res, g, err = r.gate.GrantSimilar(ctx, a.ID, approvals.Person{Platform: "web", ID: "bob"}, r.st.Approvals())
	if err != nil || res.Status != approvals.VoteDecided || res.Approval.State != approvals.ApprovalApproved {
		t.Fatalf("bob's click = %+v, %v; want the request approved", res, err)
	}
	if g.Number != 1 || g.Hosts != "web-1,web-2" || g.Command != a.Command || g.By != "web:bob" || !g.ExpiresAt.Equal(r.clock().Add(approvals.GrantFor)) {
		t.Errorf("grant = %+v", g)
	}
	if res, g, _ := r.gate.GrantSimilar(ctx, a.ID, approvals.Person{Platform: "web", ID: "carol"}, r.st.Approvals()); res.Status != approvals.VoteLate || g.ID != 0 {
		t.Errorf("a click on a decided request = %+v, grant %+v; want late, no grant", res, g)
	}

	q := newGrantRig(t, approvals.GateConfig{Quorum: 2})
	b := q.open(t, "web-1", "systemctl restart svc-1")
	if res, g, _ := q.gate.GrantSimilar(ctx, b.ID, approvals.Person{Platform: "web", ID: "bob"}, q.st.Approvals()); res.Status != approvals.VoteRefused || g.ID != 0 {
		t.Errorf("quorum 2: %+v, grant %+v; want refused", res, g)
	}
}

// verdicts is a HostPolicy: deny for commands naming "deny", approve for
// the rest.
type verdicts struct{}

func (verdicts) Check(_, command string) approvals.HostDecision {
	if strings.Contains(command, "deny") {
		return approvals.HostDecision{Action: policy.Deny, Reasons: []string{"denied"}}
	}
	return approvals.HostDecision{Action: policy.Approve, Reasons: []string{"changes state"}}
}

// targets resolves a target to its hosts: "both" is web-1 and web-2.
type targets struct{ hosts.Executor }

func (targets) Resolve(t string) ([]string, error) {
	if t == "both" {
		return []string{"web-2", "web-1"}, nil
	}
	return []string{t}, nil
}

// nobody is an Approver that counts the requests it is asked and
// approves none.
type nobody struct{ asked int }

func (n *nobody) Approve(context.Context, approvals.CommandRequest, func(approvals.Pending)) (approvals.Outcome, error) {
	n.asked++
	return approvals.Outcome{State: "denied"}, nil
}

// A grant lets a similar approve-class command run in its thread on its
// hosts, audited with its id; nothing else: not another thread, host,
// kind of command, nor a deny-class command, nor after it expires or is
// revoked.
func TestGuardRunsOnlyWhatAGrantCovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newGrantRig(t, approvals.GateConfig{})
	a := r.open(t, "web-1,web-2", "systemctl restart svc-1")
	_, g, err := r.gate.GrantSimilar(ctx, a.ID, approvals.Person{Platform: "web", ID: "bob"}, r.st.Approvals())
	if err != nil || g.ID == 0 {
		t.Fatalf("grant: %+v, %v", g, err)
	}
	asker := &nobody{}
	guard := &approvals.Guard{Policy: verdicts{}, Approver: asker, Exec: targets{},
		Grants: approvals.Grants{Store: r.st.Approvals(), Now: r.clock}}
	permit := func(session int64, target, command string) error {
		_, err := guard.Permit(ctx, approvals.CommandRequest{Target: target, Command: command, SessionID: session,
			Requester: approvals.Person{Platform: "web", ID: "alice"}}, nil)
		return err
	}
	for _, c := range []struct{ target, command string }{{"web-1", "systemctl restart svc-2"}, {"both", "systemctl restart svc-3"}, {"web-2", "systemctl restart svc-1"}} {
		if err := permit(r.session, c.target, c.command); err != nil || asker.asked != 0 {
			t.Fatalf("%s on %s: %v (asked %d); want covered", c.command, c.target, err, asker.asked)
		}
	}
	uses, _ := r.st.Audit().AuditTrail(ctx, "grant:"+strconv.FormatInt(g.ID, 10))
	if len(uses) != 4 || uses[3].Action != "grant.use" || !strings.Contains(string(uses[3].Detail), "svc-1") {
		t.Errorf("audit of the grant = %+v; want its creation and 3 uses", uses)
	}
	other, _, _ := r.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t2"})
	for i, c := range []struct {
		session         int64
		target, command string
	}{
		{other.ID, "web-1", "systemctl restart svc-2"},
		{r.session, "web-3", "systemctl restart svc-2"},
		{r.session, "both", "systemctl stop svc-2"},
		{r.session, "web-1", "systemctl restart svc-2; reboot"},
		{r.session, "web-1", "/tmp/systemctl restart svc-2"},
	} {
		if err := permit(c.session, c.target, c.command); err == nil || asker.asked != i+1 {
			t.Errorf("%s on %s: %v (asked %d); want a new request", c.command, c.target, err, asker.asked)
		}
	}
	before := asker.asked
	var refusal *approvals.Refusal
	if err := permit(r.session, "web-1", "systemctl restart svc-deny"); !errors.As(err, &refusal) || asker.asked != before {
		t.Errorf("deny-class: %v (asked %d more); want refused without asking", err, asker.asked-before)
	}
	if ok, err := r.st.Approvals().RevokeGrant(ctx, r.session, g.ID, "web:carol", r.clock()); !ok || err != nil {
		t.Fatalf("revoke = %v, %v", ok, err)
	}
	if err := permit(r.session, "web-1", "systemctl restart svc-2"); err == nil || asker.asked != before+1 {
		t.Errorf("after revoke: %v; want a new request", err)
	}
	k := r.open(t, "web-1", "kill 100")
	if _, g, _ := r.gate.GrantSimilar(ctx, k.ID, approvals.Person{Platform: "web", ID: "bob"}, r.st.Approvals()); g.Number != 2 {
		t.Fatalf("second grant = %+v", g)
	}
	if err := permit(r.session, "web-1", "kill 200"); err != nil || asker.asked != before+1 {
		t.Fatalf("kill 200 under the grant: %v", err)
	}
	r.advance(approvals.GrantFor)
	if err := permit(r.session, "web-1", "kill 300"); err == nil || asker.asked != before+2 {
		t.Errorf("after expiry: %v; want a new request", err)
	}
}
