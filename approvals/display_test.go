package approvals

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/opsbot/opsbot/connectors"
)

func TestRenderCommandMakesHiddenCharactersVisible(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		hidden   int
	}{
		{"ls\u200b -la", "ls⟨U+200B⟩ -la", 1},
		{"rm -rf /tmp/build \u202e/ --", "rm -rf /tmp/build ⟨U+202E⟩/ --", 1},
		{"\u202a\u202b\u202c\u202d\u202e", "⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+202E⟩", 5},
		{"echo \u2066a\u2067b\u2068c\u2069", "echo ⟨U+2066⟩a⟨U+2067⟩b⟨U+2068⟩c⟨U+2069⟩", 4},
		{"ls\x1b[2K\rrm -rf /", "ls⟨ESC⟩[2K⟨CR⟩rm -rf /", 2},
		{"a\x00b\x7fc\u0085d", "a⟨NUL⟩b⟨DEL⟩c⟨U+0085⟩d", 3},
		{"r\u00adm \ufeffx\u00a0y\u2060z\u200d", "r⟨U+00AD⟩m ⟨U+FEFF⟩x⟨U+00A0⟩y⟨U+2060⟩z⟨U+200D⟩", 5},
		{"bad \xff byte", "bad ⟨0xFF⟩ byte", 1},
		{"echo ⟨U+200B⟩ ↪", "echo ⟨U+27E8⟩U+200B⟨U+27E9⟩ ⟨U+21AA⟩", 0},
		{"cat <<EOF\n\tindented\nEOF", "cat <<EOF\n\tindented\nEOF", 0},
		{"grep 'café' ü.txt", "grep 'café' ü.txt", 0},
	}
	for _, tt := range tests {
		d := RenderCommand(tt.in, DisplayOptions{})
		if d.Text != tt.want || len(d.Hidden) != tt.hidden {
			t.Errorf("RenderCommand(%q) = %q with %d hidden %v, want %q with %d", tt.in, d.Text, len(d.Hidden), d.Hidden, tt.want, tt.hidden)
		}
		if d.Long || d.Preview != d.Text {
			t.Errorf("RenderCommand(%q): a short command is shown whole", tt.in)
		}
	}
	if d := RenderCommand("ls\u200b", DisplayOptions{}); !strings.Contains(d.Hidden[0], "ZERO WIDTH SPACE at character 3") {
		t.Errorf("hidden description %q", d.Hidden[0])
	}
}

// TestRenderCommandWraps: lines are wrapped at the width without ever
// splitting a mark, and unwrapping gives the whole command back.
func TestRenderCommandWraps(t *testing.T) {
	t.Parallel()
	cmd := strings.Repeat("kubectl get pods -n production -o wide \u200b| grep -v Running; ", 20)
	d := RenderCommand(cmd, DisplayOptions{Width: 50})
	for _, line := range strings.Split(d.Text, "\n") {
		if n := utf8.RuneCountInString(line); n > 50+len("⟨U+200B⟩") {
			t.Errorf("line of %d characters: %q", n, line)
		}
		if strings.Count(line, "⟨") != strings.Count(line, "⟩") {
			t.Errorf("a mark is split across lines: %q", line)
		}
	}
	if got := unrender(t, d.Text); got != cmd {
		t.Errorf("unwrapped text differs from the command:\n%q\n%q", got, cmd)
	}
}

// TestRenderCommandLong: past the limit the preview says how much is in
// the attachment, and Text still holds everything.
func TestRenderCommandLong(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "echo line %d\u200b\n", i)
	}
	cmd := b.String()
	d := RenderCommand(cmd, DisplayOptions{Limit: 3000, Width: 80})
	if !d.Long {
		t.Fatal("a 6,000-character command is not flagged for attachment")
	}
	if n := utf8.RuneCountInString(d.Preview); n > 3000 {
		t.Errorf("preview has %d characters, limit 3000", n)
	}
	m := regexp.MustCompile(`\n… (\d+) more characters \(of (\d+)\) are not shown here: the whole command is attached$`).FindStringSubmatch(d.Preview)
	if m == nil {
		t.Fatalf("the preview does not say it was cut:\n…%s", d.Preview[len(d.Preview)-200:])
	}
	more, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	shown := utf8.RuneCountInString(strings.TrimSuffix(d.Preview, m[0]))
	if total != utf8.RuneCountInString(d.Text) || shown+more != total {
		t.Errorf("preview counts: shown %d + more %d != total %d (text %d)", shown, more, total, utf8.RuneCountInString(d.Text))
	}
	if !strings.HasPrefix(d.Text, strings.TrimSuffix(d.Preview, m[0])) {
		t.Error("the preview is not the beginning of the text")
	}
	if unrender(t, d.Text) != cmd {
		t.Error("Text does not hold the whole command")
	}
}

// TestRenderCommandRoundTrip: for random commands full of hidden
// characters, the display holds none of them and decodes back exactly.
func TestRenderCommandRoundTrip(t *testing.T) {
	t.Parallel()
	alphabet := []rune("abc -|;'\"$\\⟨⟩↪é\t\n\u200b\u200e\u202e\u2066\u2069\x1b\r\x00\u00a0\ufeff\U000E0041\u3164")
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var b strings.Builder
		for range r.IntN(200) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		cmd := b.String()
		d := RenderCommand(cmd, DisplayOptions{Width: 1 + r.IntN(40)})
		for _, c := range d.Text {
			if _, hidden := hiddenRune(c); hidden && c != '\n' && c != '\t' {
				t.Fatalf("hidden %U left in %q", c, d.Text)
			}
		}
		if got := unrender(t, d.Text); got != cmd {
			t.Fatalf("round trip:\n in  %q\n out %q\n via %q", cmd, got, d.Text)
		}
	}
}

// unrender undoes RenderCommand: it removes the wraps and decodes the marks.
func unrender(t *testing.T, text string) string {
	t.Helper()
	text = strings.ReplaceAll(text, "\n↪ ", "")
	names := map[string]rune{}
	for r, n := range controlNames {
		names[n] = r
	}
	return regexp.MustCompile(`⟨([^⟨⟩]*)⟩`).ReplaceAllStringFunc(text, func(m string) string {
		name := m[len("⟨") : len(m)-len("⟩")]
		if r, ok := names[name]; ok {
			return string(r)
		}
		if hex, ok := strings.CutPrefix(name, "U+"); ok {
			n, err := strconv.ParseUint(hex, 16, 32)
			if err != nil {
				t.Fatalf("bad mark %q", m)
			}
			return string(rune(n))
		}
		if hex, ok := strings.CutPrefix(name, "0x"); ok {
			n, _ := strconv.ParseUint(hex, 16, 8)
			return string([]byte{byte(n)})
		}
		t.Fatalf("unknown mark %q", m)
		return ""
	})
}

func TestCardText(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 3, 1, 12, 15, 0, 0, time.UTC)
	c := NewCard(Approval{ID: "r1", Host: "web-1", Cwd: "/srv", Requester: "slack:U1", Command: "rm -rf /tmp/x\u202e",
		Reasons: []string{"rm: not on the read-only allowlist"}, Quorum: 2, ExpiresAt: exp, State: ApprovalPending}, DisplayOptions{Width: 80, Limit: 3000})
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
		c := NewCard(Approval{ID: "r1", Host: "h", Command: "c", Requester: "web:alice", State: tc.state, DecidedBy: tc.by}, DisplayOptions{})
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
		text := NewCard(Approval{ID: "r1", Host: "h", Command: "c", Requester: "web:alice", Quorum: q, State: ApprovalPending}, DisplayOptions{}).Text()
		if !strings.Contains(text, want) || strings.Contains(text, "(s)") {
			t.Errorf("quorum %d: %q, want %q", q, text, want)
		}
	}
}
