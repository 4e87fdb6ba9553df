package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/persist"
)

// The facts an investigation found, which no failed compaction may lose.
var facts = map[string]string{
	"uptime":     "14:02:11 up 41 days, load average: 7.42, 6.90, 6.11",
	"df -h /var": "/dev/sdb1  200G  194G  6.0G  97% /var\n" + strings.Repeat("# filler line of the df listing\n", 40),
}

// A model that answers the summary request with "I'll check first." and a
// tool call does not wipe the history: the summary request offers no
// tools, the answer is refused, every fact is still in the next request,
// and the next step does not ask for a summary again.
func TestCompactionRefusesASummaryThatCallsATool(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		f, p := w.model(t,
			testfake.Use("c1", "", "run_command", run("web-1", "uptime"), "run_command", run("web-1", "df -h /var")),
			testfake.Say("web-1: load 7.42 and /var is 97% full."),
			testfake.Use("s1", "I'll check first.", "run_command", run("web-1", "uptime")), // the summary request
			testfake.Use("c2", "", "run_command", run("web-1", "free -m")),
			testfake.Say("Memory is fine; /var is still the problem."))
		h, sess := sqliteSession(t)
		fl := &fleet{outputs: map[string]string{"uptime": facts["uptime"], "df -h /var": facts["df -h /var"], "free -m": "Mem: 512 free"}}
		a := investigator(p, h, fl)
		a.CompactAt = 400
		ctx := context.Background()
		if err := a.Turn(ctx, sess, "why is web-1 slow?", (&testfake.Recorder{}).Emit); err != nil {
			t.Fatal(err)
		}
		ev := &testfake.Recorder{}
		if err := a.Turn(ctx, sess, "and memory?", ev.Emit); err != nil {
			t.Fatal(err)
		}
		reqs := f.Requests()
		if len(reqs) != 5 {
			t.Fatalf("%d requests; want 5 (the summary request once, not on every step)", len(reqs))
		}
		summary := reqs[2].Body
		if _, ok := summary["tools"]; ok {
			t.Errorf("the summary request offers tools: %v", summary["tools"])
		}
		if texts := w.userTexts(summary); len(texts) != 1 || !strings.Contains(texts[0], "97% /var") {
			t.Errorf("the summary request does not carry the transcript as text: %q", texts)
		}
		next := testfake.JSON(reqs[3].Body)
		for _, fact := range []string{"load average: 7.42", "194G  6.0G  97% /var"} {
			if !strings.Contains(next, fact) {
				t.Errorf("%q is lost from the next request", fact)
			}
		}
		if !strings.Contains(next, "why is web-1 slow?") {
			t.Error("the first question is lost from the next request")
		}
		if strings.Contains(next, "I'll check first.") || strings.Contains(next, "Summary of the conversation") {
			t.Error("the refused summary reached the next request")
		}
		if notes := ev.Kinds(agent.Notice); len(notes) != 1 || !strings.Contains(notes[0].Text, "called a tool instead of writing a summary") {
			t.Errorf("notices = %+v; want one saying why the context was not compacted", notes)
		}
		if tr, _ := h.Store.Sessions().Transcripts(ctx, sess.ID); len(tr) != 0 {
			t.Errorf("%d transcripts archived; want none", len(tr))
		}
	})
}

// What a summary must be to replace the history it summarizes.
func TestCompactionKeepsHistoryOnABadSummary(t *testing.T) {
	t.Parallel()
	long := "SUMMARY: web-1's /var is 97% full (194G of 200G, /dev/sdb1); load average 7.42 for 41 days of uptime. " +
		"Nothing was changed. Left to check: what writes to /var/log, and whether logrotate runs."
	for _, c := range []struct {
		name      string
		step      testfake.Step
		compacted bool
		why       string
	}{
		{"empty", testfake.Text("  \n"), false, "empty summary"},
		{"far shorter than the facts", testfake.Text("I'll check first."), false, "far shorter"},
		{"a tool call", testfake.Calls("Let me look.", "echo", `{}`), false, "called a tool"},
		{"a real summary", testfake.Text(long), true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st, sess := testfake.Store(t)
			h := persist.History{Store: st}
			ctx := context.Background()
			old := agent.UserText("why is web-1 slow? " + facts["df -h /var"] + facts["uptime"])
			h.Append(ctx, sess.ID, old, agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockText, Text: "/var is 97% full."}}})
			model := &testfake.Model{Steps: []testfake.Step{c.step, testfake.Text("Still 97%.")}}
			a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: h, CompactAt: 200}
			rec := &testfake.Recorder{}
			if err := a.Turn(ctx, sess, "and now?", rec.Emit); err != nil {
				t.Fatal(err)
			}
			reqs := model.Requests()
			if len(reqs[0].Tools) != 0 || reqs[0].System != agent.SummaryPrompt {
				t.Errorf("the summary request offers tools: %s", testfake.JSON(reqs[0].Tools))
			}
			msgs := testfake.Load(t, h, sess.ID)
			if compacted := strings.Contains(agent.TextOf(msgs[0]), "SUMMARY:"); compacted != c.compacted {
				t.Fatalf("compacted = %v; want %v: %s", compacted, c.compacted, testfake.JSON(msgs))
			}
			if !c.compacted && (len(msgs) != 4 || !strings.Contains(testfake.JSON(reqs[1].Messages), "97% /var")) {
				t.Errorf("the history was not kept whole: %s", testfake.JSON(reqs[1].Messages))
			}
			if notes := rec.Kinds(agent.Notice); len(notes) != 1 || !strings.Contains(notes[0].Text, c.why) {
				t.Errorf("notices = %+v; want one with %q", notes, c.why)
			}
		})
	}
}

// After a refused summary the turn does not ask again on every step, but
// does once the history has grown by a quarter of compact_at.
func TestCompactionBacksOffUntilTheHistoryGrows(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	h := persist.History{Store: st}
	ctx := context.Background()
	h.Append(ctx, sess.ID, agent.UserText("why is web-1 slow? "+facts["df -h /var"]), agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockText, Text: "/var is 97% full."}}})
	small := testfake.Tool{Name: "small", Fn: func(context.Context, agent.ToolCall) agent.ToolResult { return agent.ToolResult{Content: "ok"} }}
	big := testfake.Tool{Name: "big", Fn: func(context.Context, agent.ToolCall) agent.ToolResult {
		return agent.ToolResult{Content: strings.Repeat("/var/log/app.log 41G\n", 100)}
	}}
	summary := "SUMMARY: web-1's /var is 97% full (194G of 200G on /dev/sdb1); /var/log/app.log holds 41G. Nothing was changed. " +
		"Left to check: what writes app.log so fast, and whether logrotate runs on web-1 at all."
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Text("I'll check first."), // refused
		testfake.Calls("", "small", `{}`),  // grows the history a little: no new attempt
		testfake.Calls("", "big", `{}`),    // grows it by 2 KB: a new attempt
		testfake.Text(summary),
		testfake.Text("app.log fills /var."),
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(small, big), History: h, CompactAt: 200}
	if err := a.Turn(ctx, sess, "and now?", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	var asked []int
	for i, r := range model.Requests() {
		if r.System == agent.SummaryPrompt {
			asked = append(asked, i+1)
		}
	}
	if fmt.Sprint(asked) != "[1 4]" {
		t.Errorf("summary requests at calls %v; want [1 4]: refused, then again after the big result", asked)
	}
	if msgs := testfake.Load(t, h, sess.ID); !strings.Contains(agent.TextOf(msgs[0]), "SUMMARY:") {
		t.Errorf("the second summary was not kept: %s", testfake.JSON(msgs[0]))
	}
}
