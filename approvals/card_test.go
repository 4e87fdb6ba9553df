package approvals

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/policy"

	"github.com/opsbot/opsbot/connectors"
)

func TestCardText(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 3, 1, 12, 15, 0, 0, time.UTC)
	c := NewCard(Approval{ID: "r1", Host: "web-1", Cwd: "/srv", Requester: "slack:U1", Command: "rm -rf /tmp/x\u202e",
		Reasons: []string{"rm: not on the read-only allowlist"}, Quorum: 2, ExpiresAt: exp, State: ApprovalPending}, policy.DisplayOptions{Width: 80, Limit: 3000})
	text := c.Text()
	for _, want := range []string{"Approval needed\n", "Host: web-1", "Directory: /srv", "Requested by: @U1", "rm -rf /tmp/x⟨U+202E⟩", "1 hidden characters made visible", "rm: not on the read-only allowlist", "Needs 2 approvals; expires " + FormatTime(exp)} {
		if !strings.Contains(text, want) {
			t.Errorf("card lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "r1") {
		t.Errorf("the card shows the request's internal id:\n%s", text)
	}
	if strings.ContainsRune(text, '\u202e') {
		t.Error("the card carries a raw bidi control")
	}
}

// A decided card says so in its heading, with the decider as a person.
func TestCardHeadingShowsTheDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state ApprovalState
		by    string
		want  string
	}{
		{ApprovalPending, "", "Approval needed"},
		{ApprovalApproved, "web:bob", "Approved by @bob"},
		{ApprovalDenied, "slack:U2", "Denied by @U2"},
		{ApprovalDenied, "web:alice", "Denied by @alice"}, // the requester too: one word for one act
		{ApprovalExpired, ExpiryActor, "Expired, not run"},
	} {
		c := NewCard(Approval{ID: "r1", Host: "h", Command: "c", Requester: "web:alice", State: tc.state, DecidedBy: tc.by}, policy.DisplayOptions{})
		if got := c.Heading(); got != tc.want {
			t.Errorf("%s by %s: heading %q, want %q", tc.state, tc.by, got, tc.want)
		}
		if !strings.HasPrefix(c.Text(), tc.want+"\n") {
			t.Errorf("%s: the text does not start with its heading:\n%s", tc.state, c.Text())
		}
	}
}

// The card says who may approve: the configured approvers for its channel
// and hosts, without the requester.
func TestWhoMayApprove(t *testing.T) {
	t.Parallel()
	a := Approval{Host: "db-1", Channel: "ops", Requester: "web:alice"}
	for _, tc := range []struct {
		name string
		cfg  GateConfig
		want string
	}{
		{"named", GateConfig{Approvers: []ApproverConfig{{Web: UserList{Users: []string{"alice", "bob", "carol"}}}}}, "@bob or @carol"},
		{"anyone", GateConfig{Approvers: []ApproverConfig{{Web: UserList{Users: []string{"*"}}}}}, "anyone on the web chat but @alice"},
		{"other hosts only", GateConfig{Approvers: []ApproverConfig{{Hosts: []string{"web-1"}, Web: UserList{Users: []string{"bob"}}}}}, "nobody (no approver is configured for this channel and host; see approvals.approvers)"},
		{"self allowed", GateConfig{AllowSelfApproval: true, Approvers: []ApproverConfig{{Web: UserList{Users: []string{"alice"}}}}}, "@alice"},
	} {
		g := NewGate(nil, tc.cfg, GateOptions{})
		if got := connectors.PlainMentions(g.WhoMayApprove(a)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// On Slack and Discord the approvers and groups are platform ids: the
// card names them with mention placeholders, which each connector shows
// as its platform's mention, never as the bare id.
func TestWhoMayApproveNamesPlatformPeopleAsMentions(t *testing.T) {
	t.Parallel()
	cfg := GateConfig{Approvers: []ApproverConfig{{
		Slack:   SlackApprovers{Users: []string{"U1", "U2"}, UserGroups: []string{"S1"}},
		Discord: DiscordApprovers{Users: []string{"100000000000000003"}, Roles: []string{"200000000000000001"}},
	}}}
	g := NewGate(nil, cfg, GateOptions{})
	for _, tc := range []struct{ requester, want string }{
		{"slack:U1", connectors.Mention("U2") + " or members of " + connectors.GroupMention("S1")},
		{"discord:100000000000000002", connectors.Mention("100000000000000003") + " or members of " + connectors.GroupMention("200000000000000001")},
	} {
		a := Approval{Host: "db-1", Channel: "ops", Requester: tc.requester}
		if got := g.WhoMayApprove(a); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.requester, got, tc.want)
		}
	}
}

// A count is said in words, singular or plural, never "approval(s)".
func TestCardSaysHowManyApprovalsInWords(t *testing.T) {
	t.Parallel()
	for q, want := range map[int]string{1: "Needs 1 approval;", 2: "Needs 2 approvals;"} {
		text := NewCard(Approval{ID: "r1", Host: "h", Command: "c", Requester: "web:alice", Quorum: q, State: ApprovalPending}, policy.DisplayOptions{}).Text()
		if !strings.Contains(text, want) || strings.Contains(text, "(s)") {
			t.Errorf("quorum %d: %q, want %q", q, text, want)
		}
	}
}

// A card's risk follows the request: a pending one on several hosts, or
// one more than one person must approve, is high; any other pending one
// asks; approved is green, denied and expired closed.
func TestCardRisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a    Approval
		want connectors.Risk
	}{
		{Approval{Host: "web-1", Quorum: 1, State: ApprovalPending}, connectors.RiskAsk},
		{Approval{Host: "web-1,web-2", Quorum: 1, State: ApprovalPending}, connectors.RiskHigh},
		{Approval{Host: "web-1", Quorum: 2, State: ApprovalPending}, connectors.RiskHigh},
		{Approval{Host: "web-1,web-2", Quorum: 2, State: ApprovalApproved}, connectors.RiskApproved},
		{Approval{Host: "web-1", Quorum: 1, State: ApprovalDenied}, connectors.RiskClosed},
		{Approval{Host: "web-1", Quorum: 1, State: ApprovalExpired}, connectors.RiskClosed},
	} {
		if got := NewCard(tc.a, policy.DisplayOptions{}).Risk(); got != tc.want {
			t.Errorf("%s on %s, quorum %d: risk %q; want %q", tc.a.State, tc.a.Host, tc.a.Quorum, got, tc.want)
		}
	}
}
