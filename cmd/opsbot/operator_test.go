package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// runningBot is a database as 'opsbot run' holds it: open for writing,
// its lock taken, with a session, a pending approval with a vote, a job
// and audit entries (one with a secret, redacted as the executor writes
// it).
type runningBot struct {
	dir, cfg string
	st       *store.Store
	approval approvals.Approval
}

func startRunningBot(t *testing.T) *runningBot {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "opsbot.db")
	cfg := filepath.Join(dir, "opsbot.yaml")
	known := filepath.Join(dir, "known_hosts")
	os.WriteFile(known, nil, 0o600)
	os.WriteFile(cfg, []byte(fmt.Sprintf(`store:
  path: %s
ssh:
  known_hosts: %s
hosts:
  - name: db-1
    address: 127.0.0.1:1
    groups: [db]
approvals:
  approvers:
    - host_groups: [db]
      slack: {users: [U2, U3]}
`, db, known)), 0o600)
	unlock, err := lockStore(db, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	st, err := store.Open(context.Background(), store.Config{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &runningBot{dir: dir, cfg: cfg, st: st}
	b.seed(t)
	return b
}

func (b *runningBot) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	sess, _, err := b.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "slack", Channel: "C9", Thread: "1764250000.000100"})
	if err != nil {
		t.Fatal(err)
	}
	b.approval, err = b.st.Approvals().CreateApproval(ctx, approvals.Approval{Hash: "h", SessionID: sess.ID, Platform: "slack", Channel: "C9",
		Host: "db-1", Command: "systemctl restart postgresql", Requester: "slack:U1", Quorum: 2, ExpiresAt: time.Now().Add(12*time.Minute + 20*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.Approvals().RecordVote(ctx, b.approval.ID, "slack:U2", "approve"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.Jobs().CreateJob(ctx, hosts.Job{SessionID: sess.ID, Host: "db-1", Command: "uptime", Requester: "slack:U1"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.AuditEntry{
		{Actor: "web:alice", Action: "command.start", Subject: "host:web-1", Detail: []byte(`{"command":"curl -H 'Authorization: Bearer [REDACTED]' x"}`)},
		{Actor: "scheduler", Action: "command.start", Subject: "host:db-1", Detail: []byte(`{"command":"pg_isready, \"quoted\""}`)},
	} {
		if err := b.st.Audit().Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestApprovalsListWhileTheBotRuns(t *testing.T) {
	t.Parallel()
	b := startRunningBot(t)
	code, out, stderr := runOpsbot(t, "approvals", "list", "--config", b.cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		b.approval.ID[:8] + "  db-1: systemctl restart postgresql\n",
		"asked by @U1 on slack in C9\n",
		"may approve: @U2 or @U3\n",
		"votes: 1 of 2 approvals (@U2)\n",
		"expires in 12 minutes (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals list lacks %q:\n%s", want, out)
		}
	}
}

func TestSessionsListWhileTheBotRuns(t *testing.T) {
	t.Parallel()
	b := startRunningBot(t)
	ctx := context.Background()
	b.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "general", Thread: "m7"})
	code, out, stderr := runOpsbot(t, "sessions", "list", "--config", b.cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	slackRow := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d \(.+ ago\)\s+slack\s+C9, thread of 2025-11-27 \d\d:\d\d\s+@U1\s+waiting for approval$`)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "LAST ACTIVITY") || !slackRow.MatchString(lines[2]) ||
		!strings.Contains(lines[1], "general, thread m7") || !strings.HasSuffix(lines[1], "idle (no answer yet)") {
		t.Errorf("sessions list, web newest then slack:\n%s", out)
	}
	if code, out, _ := runOpsbot(t, "sessions", "list", "--config", b.cfg, "--limit", "1"); code != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("--limit 1: exit %d\n%s", code, out)
	}
}

func TestAuditFiltersAndFormats(t *testing.T) {
	t.Parallel()
	b := startRunningBot(t)
	code, out, stderr := runOpsbot(t, "audit", "--config", b.cfg, "--host", "db-1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var actions []string
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var e auditLine
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("--json line %q: %v", line, err)
		}
		actions = append(actions, e.Who+" "+e.Action)
	}
	if strings.Join(actions, ", ") != "slack:U1 approval.request, slack:U1 job.start, scheduler command.start" {
		t.Errorf("--host db-1 --json: %v", actions)
	}

	code, out, _ = runOpsbot(t, "audit", "--config", b.cfg, "--who", "alice", "--since", "1h", "--csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != "id,at,who,action,subject,detail" ||
		rows[1][2] != "web:alice" || !strings.Contains(rows[1][5], "[REDACTED]") || !strings.HasSuffix(out, "\r\n") {
		t.Errorf("--who alice --csv: exit %d, %v\n%q", code, err, out)
	}
	if strings.Contains(out, "Bearer ey") {
		t.Error("a secret in the audit output")
	}

	code, out, _ = runOpsbot(t, "audit", "--config", b.cfg, "--limit", "1")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 || !strings.Contains(lines[1], "scheduler") {
		t.Errorf("--limit 1 (the latest): exit %d\n%s", code, out)
	}
	if code, out, _ := runOpsbot(t, "audit", "--config", b.cfg, "--id", "2"); code != 0 ||
		!regexp.MustCompile(`^ID +TIME +WHO +ACTION +SUBJECT +DETAIL\n2  +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  +\S+ +\S+ `).MatchString(out) || strings.Count(out, "\n") != 2 {
		t.Errorf("--id 2 (one entry, its number first): exit %d\n%s", code, out)
	}
	if code, out, _ := runOpsbot(t, "audit", "--config", b.cfg, "--until", "2000-01-01"); code != 0 || out != "No audit entries match.\n" {
		t.Errorf("--until 2000-01-01: exit %d %q", code, out)
	}
}

func TestOperatorCommandsBadInputExit2(t *testing.T) {
	t.Parallel()
	b := startRunningBot(t)
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "--config", b.cfg, "--since", "yesterday"}, "give a duration back from now"},
		{[]string{"audit", "--config", b.cfg, "--since", "1h", "--until", "2h"}, "is not before --until"},
		{[]string{"audit", "--config", b.cfg, "--json", "--csv"}, "choose one output"},
		{[]string{"audit", "--config", b.cfg, "--limit", "-1"}, "or 0 for all"},
		{[]string{"audit", "--config", b.cfg, "--id", "-3"}, "give an audit entry's number"},
		{[]string{"sessions", "list", "--data-dir", missing}, "there is no database at " + missing},
		{[]string{"approvals", "list", "--data-dir", missing}, "point --data-dir DIR at the bot's database"},
		{[]string{"backup", "--config", b.cfg}, "backup needs one FILE"},
		{[]string{"backup", "--config", b.cfg, filepath.Join(missing, "x.db")}, "there is no folder " + missing},
		{[]string{"sessions"}, "'opsbot sessions list'"},
	} {
		code, _, stderr := runOpsbot(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a read command created the --data-dir it was given")
	}
}

// The backup needs no lock and no stop: taken while the bot's store
// writes, the copy opens and holds the rows; an existing file is refused
// without --force.
func TestBackupWhileTheBotWrites(t *testing.T) {
	t.Parallel()
	b := startRunningBot(t)
	ctx, cancel := context.WithCancel(context.Background())
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for ctx.Err() == nil {
			b.st.Audit().Audit(ctx, store.AuditEntry{Actor: "opsbot", Action: "busy", Subject: "x"})
		}
	}()
	dest := filepath.Join(t.TempDir(), "copy.db")
	code, out, stderr := runOpsbot(t, "backup", "--config", b.cfg, dest)
	cancel()
	<-wrote
	if code != 0 || !regexp.MustCompile(`^`+regexp.QuoteMeta(dest)+`: copied from .*opsbot\.db, [\d.]+ KiB \(\d+ pages\), integrity ok\n`).MatchString(out) ||
		!regexp.MustCompile(`\n  approvals +1 rows\n`).MatchString(out) || !regexp.MustCompile(`\n  sessions +1 rows\n`).MatchString(out) {
		t.Fatalf("backup: exit %d %q %q", code, out, stderr)
	}
	cp, err := store.OpenReadOnly(context.Background(), store.Config{Path: dest})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if p, err := cp.Approvals().PendingApprovals(context.Background()); err != nil || len(p) != 1 || p[0].Command != "systemctl restart postgresql" {
		t.Errorf("the copy's pending approvals: %+v, %v", p, err)
	}
	before, _ := os.ReadFile(dest)
	if code, _, stderr := runOpsbot(t, "backup", "--config", b.cfg, dest); code != exitUsage || !strings.Contains(stderr, "add --force") {
		t.Errorf("backup over an existing file: exit %d %q", code, stderr)
	}
	if after, _ := os.ReadFile(dest); !bytes.Equal(before, after) {
		t.Error("a refused backup changed the file")
	}
	if code, _, stderr := runOpsbot(t, "backup", "--config", b.cfg, "--force", dest); code != 0 {
		t.Errorf("backup --force: exit %d %q", code, stderr)
	}
}

// hosts list reads the config alone: a host nobody answers on is listed
// (ping would fail on it), with its user, groups and sandbox rule.
func TestHostsListWithoutConnecting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	known := filepath.Join(dir, "known_hosts")
	os.WriteFile(known, nil, 0o600)
	cfg := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(cfg, []byte(`ssh:
  known_hosts: `+known+`
  user: ops
  readonly_user: viewer
hosts:
  - name: db-1
    address: 127.0.0.1:1
    groups: [db, prod]
  - name: lab-1
    address: 127.0.0.1:2
    user: root
    remote_sandbox: best_effort
`), 0o600)
	code, out, stderr := runOpsbot(t, "hosts", "list", "--config", cfg)
	want := []string{
		`^HOST\s+ADDRESS\s+USER\s+GROUPS\s+SANDBOX$`,
		`^local\s+-\s+-\s+-\s+this machine's`,
		`^db-1\s+127\.0\.0\.1:1\s+ops, read-only viewer\s+db,prod\s+bwrap required, else approval \(required\)$`,
		`^lab-1\s+127\.0\.0\.1:2\s+root, read-only viewer\s+-\s+bwrap if installed \(best_effort\)$`,
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != 0 || len(lines) != len(want) {
		t.Fatalf("hosts list: exit %d %q\n%s", code, stderr, out)
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("row %d %q does not match %s", i, lines[i], re)
		}
	}
	if code, out, _ := runOpsbot(t, "hosts", "list", "--config", cfg, "group:db"); code != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("hosts list group:db: exit %d\n%s", code, out)
	}
	if code, _, stderr := runOpsbot(t, "hosts", "list", "--config", cfg, "web-9"); code != exitUsage || !strings.Contains(stderr, `unknown host "web-9": the hosts are`) {
		t.Errorf("hosts list web-9: exit %d %q; want 2 naming the hosts", code, stderr)
	}
}

// The commands that only read the database need store: to be right, not
// the rest: a webhook secret unset where they run does not stop them (a
// new user's `opsbot audit` failed on OPSBOT_ALERT_TOKEN), while an unset
// variable in store: still does, in words.
func TestReadCommandsNeedOnlyTheStoresKeys(t *testing.T) {
	t.Parallel()
	b := startRunningBot(t)
	base, err := os.ReadFile(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	withSecret := filepath.Join(b.dir, "alerts.yaml")
	os.WriteFile(withSecret, append(base, []byte(`alerts:
  sources:
    - name: am
      type: alertmanager
      token: ${OPSBOT_TEST_UNSET_ALERT_TOKEN}
  routes:
    - post_to: {platform: web, channel: ops}
`)...), 0o600)
	for _, args := range [][]string{{"audit"}, {"stats"}, {"sessions", "list"}, {"approvals", "list"}} {
		if code, out, stderr := runOpsbot(t, append(args, "--config", withSecret)...); code != 0 {
			t.Errorf("%v with an unset alert token: exit %d %q %q", args, code, out, stderr)
		}
	}
	badStore := filepath.Join(b.dir, "store.yaml")
	os.WriteFile(badStore, []byte("store:\n  path: ${OPSBOT_TEST_UNSET_DB}/opsbot.db\n"), 0o600)
	if code, _, stderr := runOpsbot(t, "audit", "--config", badStore); code != exitUsage || !strings.Contains(stderr, "OPSBOT_TEST_UNSET_DB is not set") {
		t.Errorf("an unset variable in store.path: exit %d %q; want 2 naming it", code, stderr)
	}
}
