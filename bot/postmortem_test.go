package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/web/archive"
	"github.com/opsbot/opsbot/store"
)

// incidentThread writes an incident thread of n question/answer pairs to
// a fresh store: a question, a read-only command, an approved fix and its
// answer, as the agent, the executor and an approver leave them.
func incidentThread(t testing.TB, n int) (*store.Store, store.Session) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	key := store.ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"}
	sess, _, _ := st.Sessions().SessionFor(ctx, key)
	webSeq := 0
	post := func(user string, bot bool) { // the web chat's message, as the connector keeps it
		webSeq++
		id, at := fmt.Sprintf("m%d", webSeq), st.Now()
		if err := st.Web().Save(ctx, archive.Message{ID: id, Channel: "ops", Thread: "m1", User: user, Bot: bot, Message: json.RawMessage(`{"text":"x"}`),
			Finished: true, Seq: uint64(webSeq), Created: at, Updated: at}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		post("alice", false)
		turn, _ := st.Sessions().BeginTurn(ctx, sess.ID)
		appendText(t, st, sess.ID, "user", fmt.Sprintf("Question %d: nginx returns 502 on web-1", i))
		post("", true)
		ran(t, st, "web:alice", "web-1", "systemctl status nginx", 3)
		if i == n-1 {
			a, _ := st.Approvals().CreateApproval(ctx, approvals.Approval{SessionID: sess.ID, Host: "web-1", Command: "systemctl restart nginx",
				Requester: "web:alice", State: approvals.ApprovalPending, ExpiresAt: clock.Add(time.Hour)})
			st.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "web:bob")
			ran(t, st, "web:alice", "web-1", "systemctl restart nginx", 0)
		}
		appendText(t, st, sess.ID, "assistant", "nginx had crashed.\nSuspected cause: a bad upstream block.\nNext steps: restart it.")
		st.Sessions().EndTurn(ctx, turn.ID, store.TurnDone)
	}
	return st, sess
}

func appendText(t testing.TB, st *store.Store, sessionID int64, role, text string) {
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
	if _, err := st.Sessions().AppendMessages(context.Background(), sessionID, store.Message{Role: role, Content: b}); err != nil {
		t.Fatal(err)
	}
}

func ran(t testing.TB, st *store.Store, who, host, command string, exit int) {
	d, _ := json.Marshal(map[string]any{"command": command, "exit_code": exit})
	if err := st.Audit().Audit(context.Background(), store.AuditEntry{At: st.Now(), Actor: who, Action: "command.end", Subject: "host:" + host, Detail: d}); err != nil {
		t.Fatal(err)
	}
}

// timelineRef is the reference a timeline entry ends with: an audit row,
// or who wrote a message and its id in the web chat.
var timelineRef = regexp.MustCompile(`\[(?:audit row (\d+)|(@alice|opsbot), web message (m\d+))\]$`)

// Every timeline entry of a postmortem names an audit row or a message
// that is on record, in terms a reader can follow (checked here against
// the store's own tables, not the code under test): 0 without. The
// approval request and its decision are on it; people are @alice, never
// web:alice. The commands list who asked and who approved, and the fix
// is the approved command.
func TestPostmortemTimelineIsTheRecord(t *testing.T) {
	t.Parallel()
	st, sess := incidentThread(t, 3)
	ctx := context.Background()
	md, err := Postmortem(ctx, st.Memory(), sess.ID, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"}, nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	timeline := section(md, "## Timeline")
	entries, without := 0, 0
	audit, _ := st.Audit().AuditTrail(ctx, "")
	web, _ := st.Web().ThreadMessages(ctx, "m1", 0, 1000)
	for _, line := range strings.Split(timeline, "\n") {
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		entries++
		m := timelineRef.FindStringSubmatch(line)
		if m == nil || !onRecord(m, audit, web) {
			without++
			t.Errorf("timeline entry without a record: %s", line)
		}
	}
	t.Logf("postmortem timeline: %d entries, %d without a record", entries, without)
	if entries != 3*3+1+2 {
		t.Errorf("%d timeline entries; want 12 (3 questions, 3 answers, 4 commands, a request and its decision):\n%s", entries, md)
	}
	for _, want := range []string{"| `systemctl restart nginx` | 0 | @alice | @bob | audit row ", "## What fixed it\n\n`systemctl restart nginx` on web-1, approved by @bob",
		"# Postmortem: Question 0: nginx returns 502 on web-1", "No model wrote the prose", "— @alice asked for approval to run `systemctl restart nginx` on web-1 [audit row ",
		"— @bob approved `systemctl restart nginx` on web-1 [audit row ", "— question: Question 2: nginx returns 502 on web-1 [@alice, web message m5]"} {
		if !strings.Contains(md, want) {
			t.Errorf("postmortem lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "web:") || strings.Contains(md, "#") && strings.Contains(md, "[msg") {
		t.Errorf("the postmortem names a person by key, or a message by seq:\n%s", md)
	}
}

// onRecord says whether a reference names a row of the store's: an
// audit row of a command or an approval, or a web chat message by its
// author.
func onRecord(m []string, audit []store.AuditEntry, web []archive.Message) bool {
	if m[1] != "" {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return slices.ContainsFunc(audit, func(a store.AuditEntry) bool {
			return a.ID == n && (a.Action == "command.end" || strings.HasPrefix(a.Action, "approval."))
		})
	}
	return slices.ContainsFunc(web, func(w archive.Message) bool {
		return w.ID == m[3] && (w.Bot && m[2] == "opsbot" || !w.Bot && "@"+w.User == m[2])
	})
}

// section is the text under heading, up to the next heading.
func section(md, heading string) string {
	_, rest, _ := strings.Cut(md, heading+"\n")
	body, _, _ := strings.Cut(rest, "\n## ")
	return body
}

// A model's prose fills the prose sections; the timeline stays the
// record's.
func TestPostmortemTakesTheModelsProseOnly(t *testing.T) {
	t.Parallel()
	st, sess := incidentThread(t, 1)
	var record string
	prose := func(_ context.Context, r string) (Prose, error) {
		record = r
		return Prose{Impact: "web-1 served 502s for 4 minutes.", Fix: "Restarting nginx.", FollowUps: "- lint upstream blocks in CI"}, nil
	}
	md, err := Postmortem(context.Background(), st.Memory(), sess.ID, store.ThreadKey{}, prose, slog.Default())
	if err != nil || !strings.Contains(md, "## Impact\n\nweb-1 served 502s for 4 minutes.") || strings.Contains(md, "No model wrote") {
		t.Errorf("postmortem with prose: %v\n%s", err, md)
	}
	if !strings.Contains(record, "[audit row ") {
		t.Errorf("the model was not given the record: %q", record)
	}
}

// summarize states asked, found, done and open from the record, and says
// no model wrote it.
func TestSummaryFromTheRecord(t *testing.T) {
	t.Parallel()
	st, sess := incidentThread(t, 2)
	s, err := Summary(context.Background(), st.Memory(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"*Asked:* Question 0: nginx returns 502 on web-1", "*Found:* Suspected cause: a bad upstream block.",
		"`systemctl restart nginx` on web-1 (exit 0, audit row ", "*Open:* `systemctl status nginx` on web-1 failed (exit 3", "no model wrote this summary"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

// A long postmortem is posted in parts under the platform limit, cut at
// line ends, nothing lost.
func TestSplitAtKeepsEveryLine(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a line of the postmortem\n", 400)
	parts := splitAt(text, postChunk)
	if len(parts) < 3 || strings.Join(parts, "\n")+"\n" != text {
		t.Errorf("%d parts; want several that join back to the text", len(parts))
	}
	for _, p := range parts {
		if len(p) > postChunk {
			t.Errorf("a part of %d bytes; limit %d", len(p), postChunk)
		}
	}
}

// BenchmarkPostmortem200Messages: a postmortem over a 200-message thread
// (100 questions, 100 answers, 101 commands) with a scripted model's
// prose; docs/BENCHMARKS.md records the figure (issue 33: under 60 s).
func BenchmarkPostmortem200Messages(b *testing.B) {
	st, sess := incidentThread(b, 100)
	prose := func(context.Context, string) (Prose, error) { return Prose{Impact: "i", Fix: "f", FollowUps: "u"}, nil }
	b.ResetTimer()
	for b.Loop() {
		if _, err := Postmortem(context.Background(), st.Memory(), sess.ID, store.ThreadKey{}, prose, slog.Default()); err != nil {
			b.Fatal(err)
		}
	}
}
