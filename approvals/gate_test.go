package approvals

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a hand-set clock shared by a store and a gate.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestStore is the Gate's store in these tests: the real SQLite store.
type TestStore interface {
	Store
	ApprovalUse
	// AuditActions lists the actions in the audit trail of a subject, in
	// order.
	AuditActions(ctx context.Context, subject string) ([]string, error)
	Close() error
}

// OpenTestStore opens the SQLite store at path, on the clock now (nil:
// the real one). store imports approvals for the rows it keeps, so a test
// in this package cannot import it: store_test.go, in approvals_test,
// sets this at init.
var OpenTestStore func(path string, now func() time.Time) (TestStore, error)

func openStore(t *testing.T, path string, clk *clock) TestStore {
	t.Helper()
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	st, err := OpenTestStore(path, now)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// testApprovers: three Slack users and the SRE user group everywhere;
// the DBA Discord role on db hosts; alice on the web, in channel C-ops only.
var testApprovers = []ApproverConfig{
	{Slack: SlackApprovers{Users: []string{"U1", "U2", "U3", "U4"}, UserGroups: []string{"S-sre"}}},
	{HostGroups: []string{"db"}, Discord: DiscordApprovers{Roles: []string{"R-dba"}}},
	{Channels: []string{"C-ops"}, Web: UserList{Users: []string{"alice"}}},
}

type fixture struct {
	t     *testing.T
	path  string
	clk   *clock
	st    TestStore
	gate  *Gate
	cfg   GateConfig
	hosts map[string][]string
}

func newFixture(t *testing.T, cfg GateConfig) *fixture {
	f := &fixture{t: t, path: filepath.Join(t.TempDir(), "opsbot.db"), clk: newClock(), cfg: cfg,
		hosts: map[string][]string{"db-1": {"db"}, "web-1": {"web"}}}
	f.open()
	t.Cleanup(func() { f.st.Close() })
	return f
}

func (f *fixture) open() {
	f.st = openStore(f.t, f.path, f.clk)
	f.gate = NewGate(f.st, f.cfg, GateOptions{Now: f.clk.Now, HostGroups: func(h string) []string { return f.hosts[h] }})
}

// restart closes the database and opens it again with a new Gate, as a
// new process would.
func (f *fixture) restart() {
	if err := f.st.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open()
}

func (f *fixture) request(host, channel string, requester Person) string {
	a, err := f.gate.Open(context.Background(), Request{Host: host, Command: "systemctl restart nginx", Requester: requester, Channel: channel, Reasons: []string{"systemctl: restart changes state"}})
	if err != nil {
		f.t.Fatal(err)
	}
	return a.ID
}

// transitions counts the audited final transitions of a request.
func (f *fixture) transitions(id string) int {
	trail, err := f.st.AuditActions(context.Background(), "approval:"+id)
	if err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, action := range trail {
		switch action {
		case "approval.approved", "approval.denied", "approval.expired":
			n++
		}
	}
	return n
}

func slack(id string, groups ...string) Person {
	return Person{Platform: "slack", ID: id, Groups: groups}
}

type step struct {
	who    Person
	vote   string
	after  time.Duration // advance the clock first
	status VoteStatus
}

func TestVoteMatrix(t *testing.T) {
	t.Parallel()
	requester := slack("U1")
	tests := []struct {
		name      string
		cfg       GateConfig
		host, ch  string
		restart   int    // restart before this step (index+1); 0: never
		asker     Person // default: slack:U1
		steps     []step
		wantState ApprovalState
		wantBy    string
	}{
		{name: "self-approval refused", steps: []step{{requester, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "self-approval allowed by config", cfg: GateConfig{AllowSelfApproval: true},
			steps: []step{{requester, VoteApprove, 0, VoteDecided}}, wantState: ApprovalApproved, wantBy: "slack:U1"},
		{name: "requester may withdraw", steps: []step{{requester, VoteDeny, 0, VoteDecided}}, wantState: ApprovalDenied, wantBy: "slack:U1"},
		{name: "non-approver approve", steps: []step{{slack("U9"), VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "non-approver deny", steps: []step{{slack("U9"), VoteDeny, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "the requester's id on another platform", steps: []step{{Person{Platform: "discord", ID: "U1"}, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "an approver of another platform", asker: Person{Platform: "web", ID: "bob"}, host: "db-1",
			steps: []step{{Person{"discord", "D1", []string{"R-dba"}}, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "same id on another platform", steps: []step{{Person{Platform: "discord", ID: "U2"}, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "no identity", steps: []step{{Person{}, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "user group member", steps: []step{{slack("U7", "S-sre"), VoteApprove, 0, VoteDecided}}, wantState: ApprovalApproved, wantBy: "slack:U7"},
		{name: "discord role on a db host", host: "db-1", asker: Person{Platform: "discord", ID: "D9"},
			steps: []step{{Person{"discord", "D1", []string{"R-dba"}}, VoteApprove, 0, VoteDecided}}, wantState: ApprovalApproved, wantBy: "discord:D1"},
		{name: "discord role on a web host", host: "web-1", asker: Person{Platform: "discord", ID: "D9"},
			steps: []step{{Person{"discord", "D1", []string{"R-dba"}}, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "web approver in its channel", ch: "C-ops", asker: Person{Platform: "web", ID: "bob"}, steps: []step{{Person{Platform: "web", ID: "alice"}, VoteApprove, 0, VoteDecided}}, wantState: ApprovalApproved, wantBy: "web:alice"},
		{name: "web approver in another channel", ch: "C-dev", asker: Person{Platform: "web", ID: "bob"}, steps: []step{{Person{Platform: "web", ID: "alice"}, VoteApprove, 0, VoteRefused}}, wantState: ApprovalPending},
		{name: "double vote", cfg: GateConfig{Quorum: 2},
			steps: []step{{slack("U2"), VoteApprove, 0, VoteCounted}, {slack("U2"), VoteApprove, 0, VoteDuplicate}, {slack("U2"), VoteDeny, 0, VoteDuplicate}}, wantState: ApprovalPending},
		{name: "vote after expiry", steps: []step{{slack("U2"), VoteApprove, 15 * time.Minute, VoteLate}}, wantState: ApprovalExpired, wantBy: ExpiryActor},
		{name: "vote just before expiry", steps: []step{{slack("U2"), VoteApprove, 15*time.Minute - time.Second, VoteDecided}}, wantState: ApprovalApproved, wantBy: "slack:U2"},
		{name: "vote after decision", steps: []step{{slack("U2"), VoteApprove, 0, VoteDecided}, {slack("U3"), VoteDeny, 0, VoteLate}, {slack("U2"), VoteDeny, 0, VoteLate}},
			wantState: ApprovalApproved, wantBy: "slack:U2"},
		{name: "vote after restart", restart: 1, steps: []step{{slack("U2"), VoteApprove, 0, VoteDecided}}, wantState: ApprovalApproved, wantBy: "slack:U2"},
		{name: "quorum counted across a restart", cfg: GateConfig{Quorum: 2}, restart: 2,
			steps: []step{{slack("U2"), VoteApprove, 0, VoteCounted}, {slack("U2"), VoteApprove, 0, VoteDuplicate}, {slack("U3"), VoteApprove, 0, VoteDecided}}, wantState: ApprovalApproved, wantBy: "slack:U3"},
		{name: "expired across a restart", restart: 1, steps: []step{{slack("U2"), VoteApprove, time.Hour, VoteLate}}, wantState: ApprovalExpired, wantBy: ExpiryActor},
		{name: "quorum 2 with a deny in between", cfg: GateConfig{Quorum: 2},
			steps: []step{{slack("U2"), VoteApprove, 0, VoteCounted}, {slack("U3"), VoteDeny, 0, VoteDecided}, {slack("U4"), VoteApprove, 0, VoteLate}}, wantState: ApprovalDenied, wantBy: "slack:U3"},
		{name: "quorum 2 reached", cfg: GateConfig{Quorum: 2},
			steps: []step{{slack("U2"), VoteApprove, 0, VoteCounted}, {slack("U3"), VoteApprove, 0, VoteDecided}, {slack("U4"), VoteDeny, 0, VoteLate}}, wantState: ApprovalApproved, wantBy: "slack:U3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Approvers = testApprovers
			f := newFixture(t, tt.cfg)
			asker := requester
			if tt.asker.ID != "" {
				asker = tt.asker
			}
			id := f.request(cmp.Or(tt.host, "web-1"), tt.ch, asker)
			for i, s := range tt.steps {
				if tt.restart == i+1 {
					f.restart()
				}
				f.clk.Advance(s.after)
				res, err := f.gate.Vote(context.Background(), id, s.who, s.vote)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if res.Status != s.status {
					t.Errorf("step %d (%s %s): status %d, want %d: %s", i, s.who.Key(), s.vote, res.Status, s.status, res.Message())
				}
			}
			a, err := f.st.Approval(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if a.State != tt.wantState || a.DecidedBy != tt.wantBy {
				t.Errorf("request is %s by %q, want %s by %q", a.State, a.DecidedBy, tt.wantState, tt.wantBy)
			}
			want := 1
			if tt.wantState == ApprovalPending {
				want = 0
			}
			if n := f.transitions(id); n != want {
				t.Errorf("%d audited transitions, want %d", n, want)
			}
		})
	}
}

// TestLateClickerIsToldWhoDecided: the message names the decider.
func TestLateClickerIsToldWhoDecided(t *testing.T) {
	t.Parallel()
	f := newFixture(t, GateConfig{Approvers: testApprovers})
	id := f.request("web-1", "", slack("U1"))
	ctx := context.Background()
	if _, err := f.gate.Vote(ctx, id, slack("U2"), VoteApprove); err != nil {
		t.Fatal(err)
	}
	res, err := f.gate.Vote(ctx, id, slack("U3"), VoteApprove)
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Message()
	if res.Status != VoteLate || !strings.Contains(msg, "already approved by @U2") {
		t.Errorf("late clicker got %d %q", res.Status, msg)
	}
	// Words a person reads: no request id, no platform prefix.
	if strings.Contains(msg, id) || strings.Contains(msg, "slack:") {
		t.Errorf("late clicker's message shows internals: %q", msg)
	}
}

// TestConcurrentApproveClicks: 50 simultaneous approvals, one transition.
func TestConcurrentApproveClicks(t *testing.T) {
	t.Parallel()
	var users []string
	for i := range 50 {
		users = append(users, "V"+string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	f := newFixture(t, GateConfig{Approvers: []ApproverConfig{{Slack: SlackApprovers{Users: users}}}})
	id := f.request("web-1", "", slack("U1"))
	ctx := context.Background()
	waited := make(chan Result, 1)
	go func() {
		r, _ := f.gate.Wait(ctx, id)
		waited <- r
	}()
	statuses := make(chan VoteStatus, len(users))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, u := range users {
		wg.Go(func() {
			<-start
			res, err := f.gate.Vote(ctx, id, slack(u), VoteApprove)
			if err != nil {
				t.Error(err)
			}
			statuses <- res.Status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[VoteStatus]int{}
	for s := range statuses {
		count[s]++
	}
	if count[VoteDecided] != 1 || count[VoteLate] != len(users)-1 {
		t.Errorf("statuses: %d decided, %d late, %v", count[VoteDecided], count[VoteLate], count)
	}
	if n := f.transitions(id); n != 1 {
		t.Errorf("%d audited transitions, want exactly 1", n)
	}
	if r := <-waited; r.Outcome != ApprovalApproved {
		t.Errorf("waiter got %+v", r)
	}
}

// TestWaiterReattachesAfterRestart: the requester's process dies; a new
// one re-attaches by id and gets the decision a vote makes.
func TestWaiterReattachesAfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, GateConfig{Approvers: testApprovers})
	req := Request{Host: "web-1", Command: "systemctl restart nginx", Cwd: "/srv", Requester: slack("U1")}
	ctx, cancel := context.WithCancel(context.Background())
	opened, err := f.gate.Open(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() {
		_, err := f.gate.Wait(ctx, opened.ID)
		errs <- err
	}()
	cancel() // the process goes away while waiting
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel: %v", err)
	}
	f.restart()
	pending, err := f.gate.Pending(context.Background())
	if err != nil || len(pending) != 1 || pending[0].ID != opened.ID {
		t.Fatalf("pending after restart: %v %v", pending, err)
	}
	got := make(chan Result, 1)
	go func() {
		r, err := f.gate.Wait(context.Background(), opened.ID)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	if res, err := f.gate.Vote(context.Background(), opened.ID, slack("U2"), VoteApprove); err != nil || res.Status != VoteDecided {
		t.Fatalf("vote: %v %v", res, err)
	}
	r := <-got
	if r.Outcome != ApprovalApproved || r.DecidedBy != "slack:U2" || !r.Allows(req) {
		t.Errorf("re-attached waiter got %+v", r)
	}
	other := req
	other.Command += " "
	if r.Allows(other) {
		t.Error("an approval allowed a different command")
	}
}

// TestExpireDueAfterRestart: a request whose waiter died expires by the
// sweep, against the real store with an injected clock.
func TestExpireDueAfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, GateConfig{Approvers: testApprovers, Expiry: time.Minute})
	id := f.request("web-1", "", slack("U1"))
	keep := f.request("web-1", "", slack("U1"))
	f.clk.Advance(30 * time.Second)
	later := f.request("web-1", "", slack("U1"))
	f.restart()
	f.clk.Advance(31 * time.Second)
	// keep is past its deadline too: the vote is late and expires it.
	if res, err := f.gate.Vote(context.Background(), keep, slack("U2"), VoteDeny); err != nil || res.Status != VoteLate {
		t.Fatalf("vote past the deadline: %v %v", res.Status, err)
	}
	n, err := f.gate.ExpireDue(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v; want 1 (the other was expired by the late vote)", n, err)
	}
	for _, c := range []struct {
		id   string
		want ApprovalState
	}{{id, ApprovalExpired}, {keep, ApprovalExpired}, {later, ApprovalPending}} {
		a, _ := f.st.Approval(context.Background(), c.id)
		if a.State != c.want {
			t.Errorf("%s: %s, want %s", c.id, a.State, c.want)
		}
	}
}

func TestWebWildcardNamesEveryWebUserOnly(t *testing.T) {
	t.Parallel()
	g := NewGate(nil, GateConfig{Approvers: []ApproverConfig{{Web: UserList{Users: []string{"*"}}}}}, GateOptions{})
	a := Approval{Host: "local", Requester: "web:alice"}
	if !g.MayApprove(a, Person{Platform: "web", ID: "bob"}) {
		t.Error(`"*" did not name a web user`)
	}
	if g.MayApprove(a, Person{Platform: "slack", ID: "bob"}) {
		t.Error(`a web "*" named a Slack user`)
	}
}

func TestApproverMustCoverEveryHostOfARequest(t *testing.T) {
	t.Parallel()
	groups := map[string][]string{"web-1": {"web"}, "web-2": {"web"}, "db-1": {"db"}}
	g := NewGate(nil, GateConfig{Approvers: []ApproverConfig{{HostGroups: []string{"web"}, Web: UserList{Users: []string{"bob"}}}}},
		GateOptions{HostGroups: func(h string) []string { return groups[h] }})
	bob := Person{Platform: "web", ID: "bob"}
	if !g.MayApprove(Approval{Host: "web-1,web-2"}, bob) {
		t.Error("bob may not approve for two web hosts")
	}
	if g.MayApprove(Approval{Host: "db-1,web-1"}, bob) {
		t.Error("bob, a web approver, may approve a request that includes a db host")
	}
}

// TestVoteMessagesShowNoInternals: every answer a voter reads names people
// as @name and times in the one format, never a request id or a
// "platform:id" key.
func TestVoteMessagesShowNoInternals(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	a := Approval{ID: "0123456789abcdef0123456789abcdef", Quorum: 2, DecidedAt: at}
	cases := []struct {
		name  string
		res   VoteResult
		wants string
	}{
		{"counted", VoteResult{Status: VoteCounted, Approvals: 1, Approval: a}, "1 of 2"},
		{"decided", VoteResult{Status: VoteDecided, Approval: withState(a, ApprovalApproved, "web:bob")}, "approved"},
		{"late", VoteResult{Status: VoteLate, Approval: withState(a, ApprovalDenied, "web:bob")}, "denied by @bob at " + FormatTime(at)},
		{"expired", VoteResult{Status: VoteLate, Approval: withState(a, ApprovalExpired, "opsbot:expiry")}, "expired at " + FormatTime(at)},
	}
	for _, c := range cases {
		msg := c.res.Message()
		if !strings.Contains(msg, c.wants) {
			t.Errorf("%s: %q does not say %q", c.name, msg, c.wants)
		}
		if strings.Contains(msg, a.ID) || strings.Contains(msg, "web:") || strings.Contains(msg, "opsbot:") {
			t.Errorf("%s: %q shows internals", c.name, msg)
		}
	}
}

func withState(a Approval, state ApprovalState, by string) Approval {
	a.State, a.DecidedBy = state, by
	return a
}
