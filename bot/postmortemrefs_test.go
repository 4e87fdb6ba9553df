package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/web/archive"
	"github.com/opsbot/opsbot/store"
)

// planThread writes the try-out's web thread to a fresh store: @alice's
// question; a status card (m2) before the bot's answer (m3); a plan
// proposed (its card m4), @bob's approval and its two steps, which ran
// after the turn; opsbot's plan-result note beginning a turn and its
// answer (m5); a second question (m6) and its answer (m7).
func planThread(t *testing.T) (*store.Store, store.Session) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	sess, _, _ := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	webSeq := 0
	post := func(user, text string) {
		webSeq++
		body, _ := json.Marshal(map[string]string{"text": text})
		at := st.Now()
		if err := st.Web().Save(ctx, archive.Message{ID: fmt.Sprintf("m%d", webSeq), Channel: "ops", Thread: "m1", User: user, Bot: user == "",
			Message: body, Finished: true, Seq: uint64(webSeq), Created: at, Updated: at}); err != nil {
			t.Fatal(err)
		}
	}
	turn := func(f func()) {
		tr, _ := st.Sessions().BeginTurn(ctx, sess.ID)
		f()
		st.Sessions().EndTurn(ctx, tr.ID, store.TurnDone)
	}
	post("alice", "@opsbot nginx returns 502 on web-1, why?")
	turn(func() {
		appendText(t, st, sess.ID, "user", "nginx returns 502 on web-1, why?")
		post("", "Running `systemctl status nginx` on web-1 …")
		ran(t, st, "web:alice", "web-1", "systemctl status nginx", 3)
		post("", "nginx has crashed: a bad upstream block. I propose a plan to restart it.")
		appendText(t, st, sess.ID, "assistant", "nginx has crashed: a bad upstream block.\nI propose a plan to restart it.")
		post("", "Plan: restart nginx on web-1")
	})
	plan := approvals.Plan{Goal: "restart nginx on web-1", Steps: []approvals.PlanStep{{Target: "web-1", Command: "systemctl restart nginx"},
		{Target: "web-1", Command: "curl -sf http://localhost/health"}}}
	a, _ := st.Approvals().CreateApproval(ctx, approvals.Approval{SessionID: sess.ID, Host: "web-1", Command: plan.Canonical(),
		Requester: "web:alice", State: approvals.ApprovalPending, ExpiresAt: clock.Add(time.Hour)})
	st.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "web:bob")
	for _, s := range plan.Steps { // a plan's steps run after their turn: their rows name the session
		d, _ := json.Marshal(map[string]any{"command": s.Command, "exit_code": 0, "session_id": sess.ID})
		st.Audit().Audit(ctx, store.AuditEntry{At: st.Now(), Actor: "web:alice", Action: "command.end", Subject: "host:web-1", Detail: d})
	}
	turn(func() {
		appendText(t, st, sess.ID, "user", "[opsbot note, not the person's words] The plan \"restart nginx on web-1\" ended: every step ran.\n"+
			"step 1 `systemctl restart nginx` on web-1: complete (exit 0)\nstep 2 `curl -sf http://localhost/health` on web-1: complete (exit 0)\nTell the person what this means.")
		post("", "The restart worked: nginx serves again and the health check passes.")
		appendText(t, st, sess.ID, "assistant", "The restart worked: nginx serves again and the health check passes.")
	})
	post("alice", "@opsbot anything else to check?")
	turn(func() {
		appendText(t, st, sess.ID, "user", "anything else to check?")
		post("", "Watch the 502 rate for an hour.")
		appendText(t, st, sess.ID, "assistant", "Watch the 502 rate for an hour.")
	})
	return st, sess
}

var entryRef = regexp.MustCompile(`^- [0-9-]+ [0-9:]+ — (.*) \[(?:audit row (\d+)|(@alice|opsbot), web message (m\d+)|(` + regexp.QuoteMeta(noteRef) + `))\]$`)

// Every timeline entry cites the very record its text came from: each
// cited web message, looked up in the store, holds the entry's text;
// each audit row is the command or approval the entry names. opsbot's
// plan-result note is opsbot's, never @alice's, and the plan reads as
// its goal and steps, never its canonical text.
func TestPostmortemCitesTheRowItsTextCameFrom(t *testing.T) {
	t.Parallel()
	st, sess := planThread(t)
	ctx := context.Background()
	md, err := Postmortem(ctx, st.Memory(), sess.ID, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"}, nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the postmortem:\n%s", md)
	web, _ := st.Web().ThreadMessages(ctx, "m1", 0, 100)
	audit, _ := st.Audit().AuditTrail(ctx, "")
	entries, wrong := 0, 0
	for line := range strings.Lines(section(md, "## Timeline")) {
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		entries++
		if m := entryRef.FindStringSubmatch(strings.TrimSpace(line)); m == nil || !citesItsRow(m, web, audit) {
			wrong++
			t.Errorf("the entry does not cite the row its text came from: %s", line)
		}
	}
	t.Logf("%d timeline entries, %d citing another row", entries, wrong)
	if entries != 11 {
		t.Errorf("%d timeline entries; want 11 (2 questions, a note, 3 answers, 3 commands, a request and its decision)", entries)
	}
	for _, want := range []string{"— opsbot: plan results: The plan \"restart nginx on web-1\" ended: every step ran; step 1 `systemctl restart nginx` on web-1: complete (exit 0); step 2",
		"— @bob approved plan: restart nginx on web-1 (2 steps) [audit row ",
		"— @alice asked for approval to run plan: restart nginx on web-1 (2 steps: step 1 `systemctl restart nginx` on web-1; step 2 `curl -sf http://localhost/health` on web-1) [audit row ",
		"`curl -sf http://localhost/health` — exit 0, asked by @alice, approved by @bob [audit row ", "# Postmortem: nginx returns 502 on web-1, why?",
		"## What fixed it\n\nThe plan: restart nginx on web-1 (2 steps), approved by @bob; its last step `curl -sf http://localhost/health` on web-1 succeeded (audit row "} {
		if !strings.Contains(md, want) {
			t.Errorf("the postmortem lacks %q", want)
		}
	}
	for _, not := range []string{"opsbot plan v1", `{"goal"`, "web:", "[opsbot note", "Tell the person", "@alice, web message m1]\n- 2026-11-20 03:00:1"} {
		if strings.Contains(md, not) {
			t.Errorf("the postmortem has %q", not)
		}
	}
}

// citesItsRow says whether a timeline entry's reference (m, entryRef's
// match) is the row its text came from, by the store's own tables.
func citesItsRow(m []string, web []archive.Message, audit []store.AuditEntry) bool {
	what := m[1]
	switch {
	case m[5] != "":
		return strings.HasPrefix(what, "opsbot: ")
	case m[2] != "":
		n, _ := strconv.ParseInt(m[2], 10, 64)
		i := slices.IndexFunc(audit, func(a store.AuditEntry) bool { return a.ID == n })
		if i < 0 {
			return false
		}
		var d struct{ Command string }
		json.Unmarshal(audit[i].Detail, &d)
		return audit[i].Action == "command.end" && strings.Contains(what, "`"+d.Command+"`") ||
			audit[i].Action == "approval.request" && strings.Contains(what, "asked for approval") ||
			audit[i].Action == "approval.approved" && strings.Contains(what, "approved")
	}
	i := slices.IndexFunc(web, func(w archive.Message) bool { return w.ID == m[4] })
	if i < 0 || web[i].Bot != (m[3] == "opsbot") {
		return false
	}
	var body struct{ Text string }
	json.Unmarshal(web[i].Message, &body)
	_, text, _ := strings.Cut(what, ": ")
	return strings.Contains(strings.Join(strings.Fields(body.Text), " "), strings.TrimSuffix(text, "…"))
}

// summarize's record-built summary lists what was done, a plan's steps
// too; a model that answers with a tool call is logged as that, not as
// an empty reply.
func TestSummaryListsPlanStepsAndSaysWhyTheModelsWasNotUsed(t *testing.T) {
	st, sess := planThread(t)
	s, err := Summary(context.Background(), st.Memory(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"*Asked:* nginx returns 502 on web-1, why?", "`systemctl restart nginx` on web-1 (exit 0",
		"`curl -sf http://localhost/health` on web-1 (exit 0", "*Found:* Watch the 502 rate for an hour."} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	pen := proseModel{agent.ProviderFunc(func(context.Context, agent.Request) iter.Seq[agent.StreamEvent] {
		return func(yield func(agent.StreamEvent) bool) {
			_ = yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{Type: agent.BlockToolUse, Name: "run_command"}}) &&
				yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: "tool_use"})
		}
	}), "test-model"}
	var logs bytes.Buffer
	got, _ := modelSummary(context.Background(), st.Memory(), pen, sess.ID, slog.New(slog.NewTextHandler(&logs, nil)))
	if got != s || !strings.Contains(logs.String(), "summarize: the model answered with a tool call instead of text; used the record-built summary") ||
		strings.Contains(logs.String(), "empty") {
		t.Errorf("summary after a tool call = %q; log %s", got, logs.String())
	}
}
