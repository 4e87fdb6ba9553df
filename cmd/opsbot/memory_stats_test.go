package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// opsbot stats counts per UTC day, from a real database: answers (one
// per question answered, however many texts the model wrote on the way;
// a stopped turn is none), approved requests, commands run (not the
// scheduler's) and tokens; days before --since are left out.
func TestStatsCountsPerDay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(dir, "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return clock }
	sess, _, _ := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	day := func(answers, cmds int, approve bool, tokens int64) {
		text, _ := json.Marshal([]map[string]string{{"type": "text", "text": "answer"}})
		note, _ := json.Marshal([]map[string]string{{"type": "text", "text": "[opsbot note, not the person's words] The plan \"x\" ended: every step ran."}})
		investigation, _ := json.Marshal([]map[string]string{{"type": "text", "text": store.AlertInvestigationLead + " Investigate read-only: …"}})
		asked := text
		turn := func(status store.TurnStatus) {
			tn, _ := st.Sessions().BeginTurn(ctx, sess.ID)
			st.Sessions().AppendMessages(ctx, sess.ID, store.Message{Role: "user", Content: asked})
			for range 3 { // "Let me check the disk." … the answer: one answer
				st.Sessions().AppendMessages(ctx, sess.ID, store.Message{Role: "assistant", Content: text})
			}
			st.Sessions().EndTurn(ctx, tn.ID, status)
		}
		for range answers {
			turn(store.TurnDone)
		}
		turn(store.TurnCancelled)
		asked = note // a turn opsbot started (a plan's results, a job's end) answers no one's question
		turn(store.TurnDone)
		asked = investigation // nor does an alert's investigation
		turn(store.TurnDone)
		asked = text
		for range cmds {
			st.Audit().Audit(ctx, store.AuditEntry{At: clock, Actor: "web:alice", Action: "command.end", Subject: "host:web-1", Detail: json.RawMessage(`{"command":"uptime","exit_code":0}`)})
		}
		st.Audit().Audit(ctx, store.AuditEntry{At: clock, Actor: "scheduler", Action: "command.end", Subject: "host:web-1", Detail: json.RawMessage(`{"command":"df","exit_code":0}`)})
		if approve {
			a, _ := st.Approvals().CreateApproval(ctx, approvals.Approval{SessionID: sess.ID, Host: "web-1", Command: "reboot", Requester: "web:alice",
				State: approvals.ApprovalPending, ExpiresAt: clock.Add(time.Hour)})
			st.Approvals().DecideApproval(ctx, a.ID, approvals.ApprovalApproved, "web:bob")
		}
		st.Sessions().AddTokens(ctx, sess.ID, store.TokenUsage{Input: tokens, Cached: tokens / 2, Output: tokens / 10})
		if approve { // the busy day also has feedback: two good, one bad (three people's)
			for i, v := range []string{"good", "bad", "good"} {
				st.RecordFeedback(ctx, store.Feedback{Platform: "slack", TurnID: "1", UserID: fmt.Sprintf("U%d", i), Value: v})
			}
		}
		clock = clock.AddDate(0, 0, 1)
	}
	day(1, 1, false, 100)
	day(3, 2, true, 1000)
	day(2, 0, false, 500)
	st.Close()

	code, out, errOut := runOpsbot(t, "stats", "--data-dir", dir, "--since", "2026-11-21")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := [][]string{
		{"day", "answers", "approvals", "commands", "tokens", "in", "cached", "tokens", "out", "feedback"},
		{"2026-11-21", "3", "1", "2", "1000", "500", "100", "2", "good,", "1", "bad"},
		{"2026-11-22", "2", "0", "0", "500", "250", "50", "-"},
	}
	if len(lines) != len(want) {
		t.Fatalf("stats printed:\n%s\nwant the header and two days", out)
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("line %d = %q; want %q", i, got, w)
		}
	}
}
