package connectortest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opsbot/opsbot/connectors"
)

// Messages are the neutral messages every connector's golden files
// render, by name: an answer, code blocks, a page as long as the platform
// takes, an approval card pending and decided, a job notice, and a health
// report's summary and details. Their words are the bot's (bot/testdata
// and checks/testdata hold the goldens of how the bot writes them); a
// connector's goldens hold what it sends its platform for each, so a
// change to a renderer shows as a diff a reviewer reads. lim is the
// connector's Limits: the long page fills its MaxText. requester and
// approver are people's ids of the platform.
func Messages(lim connectors.Limits, requester, approver string) map[string]connectors.Message {
	alice, bob := connectors.Mention(requester), connectors.Mention(approver)
	return map[string]connectors.Message{
		"answer":         answer(alice),
		"code_block":     codeBlock(),
		"long_answer":    {Text: longAnswer(lim.MaxText)},
		"card_pending":   card(alice, pending),
		"card_approved":  card(alice, approved(bob)),
		"job_notice":     {Text: "🔔 job 7 (`df -h` on web-1) succeeded: exit 0 in 3s"},
		"health_summary": healthSummary(),
		"health_details": {Text: healthDetails},
	}
}

// answer is an answer in CommonMark: emphasis, a list, inline code, a
// link, a mention, characters a platform escapes, and the context line
// the renderer leaves under a finished answer.
func answer(asker string) connectors.Message {
	return connectors.Message{
		Text: asker + " **nginx is down on web-1**: the config test fails.\n\n" +
			"- `nginx -t` says _unknown directive_ in `/etc/nginx/conf.d/app.conf` line 12\n" +
			"- the last change was at 09:12 (see [the deploy log](https://ci.example.com/jobs/41?tab=log&x=1))\n\n" +
			"Fix the directive, then `systemctl reload nginx`. A < B & C > D stays as written.",
		Context: "ran 2 commands on web-1 · 14s",
	}
}

// codeBlock is command output in a fence, with backticks and markup
// characters inside that must show as they are.
func codeBlock() connectors.Message {
	return connectors.Message{Text: "Disk use on web-1:\n```\n" +
		"Filesystem      Size  Used Avail Use% Mounted on\n" +
		"/dev/sda1        40G   37G  3.0G  93% /\n" +
		"tmpfs           2.0G     0  2.0G   0% /dev/shm <none> & *bold* `tick`\n" +
		"```\n/ is 93% full."}
}

// longAnswer is paragraphs of sentences filling n characters exactly,
// as a page the bot's renderer fills to the platform's MaxText.
func longAnswer(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Sentence %d of a long answer about the fleet. ", i)
		if i%12 == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()[:n] // ASCII: n bytes are n characters
}

// cardState is what differs between a pending and a decided card.
type cardState struct {
	heading string
	fields  []connectors.Field
	context string
	buttons []connectors.Button
}

var pending = cardState{
	heading: "Approval needed",
	fields:  []connectors.Field{{Title: "Who may approve", Value: "@U04BOB or @U04CAROL"}, {Title: "Needs", Value: "1 approval"}},
	context: "expires Nov 24 09:45 UTC",
	buttons: []connectors.Button{
		{ActionID: "approve", Value: "0f3c9a", Label: "Approve", Style: connectors.StylePrimary},
		{ActionID: "deny", Value: "0f3c9a", Label: "Deny", Style: connectors.StyleDanger},
		{ActionID: "approve_similar", Value: "0f3c9a", Label: "Approve similar for 30 min in this thread"},
	},
}

func approved(by string) cardState {
	return cardState{heading: "Approved by " + by, context: "approved by " + by + " at Nov 24 09:32 UTC"}
}

// card is an approval card as bot/testdata/card_*.golden.json shows it.
func card(requester string, s cardState) connectors.Message {
	return connectors.Message{
		Text: "**" + s.heading + "** — requested by " + requester +
			"\n```\nsystemctl restart nginx\n```\nWhy: systemctl restart: changes a service",
		Fields:  append([]connectors.Field{{Title: "Host", Value: "web-1"}, {Title: "Directory", Value: "/srv/app"}}, s.fields...),
		Context: s.context,
		Buttons: s.buttons,
	}
}

// healthSummary is a scheduled report's message of the day
// (checks/testdata/report_100hosts_*.golden, message 1).
func healthSummary() connectors.Message {
	return connectors.Message{
		Text: "**Health · morning** — ✗ 2 failing · ⚠ 1 warning · ✓ 195 ok · ⊘ 1 unreachable — 2 new failures, 2 recovered since 09:00 yesterday\n" +
			"✗ web-03 · disk 78% → 93% — 93% is above 90% · **new**\n" +
			"✗ web-02 · nginx `inactive` — exit 3 (expected 0) · since Sat 09:00\n" +
			"⚠ web-01 · disk 82% → 85% — 85% is above 80% · since Sun 09:00\n" +
			"⊘ web-07 — connection refused (is sshd running?) · **new**",
		Context: "morning · 2026-11-24 09:00 CET · took 1.2s",
	}
}

// healthDetails is the start of a report's details, its grid in a fence.
const healthDetails = "**Failing (2)**\n" +
	"✗ web-03 · disk 78% → 93% — 93% is above 90% · **new**\n" +
	"✗ web-02 · nginx `inactive` — exit 3 (expected 0) · since Sat 09:00\n\n" +
	"**Recovered (1)**\n" +
	"✓ web-50 · disk 95% → 53% — was failing since 09:00 yesterday\n\n" +
	"**Grid** — one character per check: disk, nginx; `.` ok, `W` warning, `X` failing, `?` unreachable, `-` not checked\n" +
	"```\n" +
	"web-01  W.  web-02  .X  web-03  X.  web-04  ..  web-05  ..  web-06  ..\n" +
	"web-07  ??  web-08  ..  web-09  ..  web-10  ..  web-11  ..  web-12  ..\n" +
	"```"

// JSON is v as a golden file holds it: indented, keys sorted, <, > and
// & as they are (what a person reads, not HTML-safe escapes).
func JSON(t T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatalf("%v", err)
	}
	return b.Bytes()
}

// Golden compares got with testdata/name.golden.json, or writes it there
// when update is set (a connector's test passes its -update flag).
func Golden(t T, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.json")
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatalf("%v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("%v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run Golden -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("what is sent for %s differs from %s (go test -run Golden -update rewrites it); got:\n%s", name, path, got)
	}
}
