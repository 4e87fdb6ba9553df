package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// A malformed call is answered with an error the model reads, and its
// retry runs: small open models send bad JSON now and then.
func TestMalformedCallThenRetrySucceeds(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		bad := testfake.Turn{Calls: []testfake.Call{{ID: "c1", Name: "run_command", Args: `{"target": "web-1", "command": "uptime"`}}}
		f, p := w.model(t, bad,
			testfake.Use("c2", "", "run_command", run("web-1", "uptime")),
			testfake.Say("web-1 is up 3 days."))
		h, sess := sqliteSession(t)
		fl := &fleet{outputs: map[string]string{"uptime": "up 3 days"}}
		ev := &testfake.Recorder{}
		if err := investigator(p, h, fl).Turn(context.Background(), sess, "is web-1 up?", ev.Emit); err != nil {
			t.Fatal(err)
		}
		reqs := f.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests; want 3", len(reqs))
		}
		if r := w.results(reqs[1].Body); len(r) != 1 || !strings.Contains(r[0], "not valid JSON") || !strings.Contains(r[0], "again") {
			t.Errorf("the model was not told its arguments were bad: %q", r)
		}
		if got := fl.runs(); len(got) != 1 || got[0] != "web-1: uptime" {
			t.Errorf("ran %q; want the retry only", got)
		}
		if ev.Text() != "web-1 is up 3 days." {
			t.Errorf("answer = %q", ev.Text())
		}
	})
}

// The last step of a turn may not call tools and is asked for a summary,
// so a turn that reaches its step limit still ends with an answer.
func TestStepLimitEndsWithASummary(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		// The third response is a model that obeys tool_choice: it keeps
		// investigating while it may.
		third := testfake.Reply{Build: func(body map[string]any) []byte {
			if noToolUse(body) {
				return w.sse(testfake.Say("Summary: uptime and df look fine. Left to check: memory."))
			}
			return w.sse(testfake.Use("c3", "", "run_command", run("web-1", "free -m")))
		}}
		f, p := w.modelReplies(t,
			testfake.Reply{Raw: w.sse(testfake.Use("c1", "", "run_command", run("web-1", "uptime"))), Once: true},
			testfake.Reply{Raw: w.sse(testfake.Use("c2", "", "run_command", run("web-1", "df -h"))), Once: true},
			third)
		h, sess := sqliteSession(t)
		fl := &fleet{outputs: map[string]string{"uptime": "up", "df -h": "42%"}}
		a := investigator(p, h, fl)
		a.MaxSteps = 3
		ev := &testfake.Recorder{}
		if err := a.Turn(context.Background(), sess, "check web-1", ev.Emit); err != nil {
			t.Fatalf("the turn failed: %v", err)
		}
		if !strings.HasPrefix(ev.Text(), "Summary:") {
			t.Errorf("answer = %q; want the summary", ev.Text())
		}
		last := f.Requests()[2].Body
		if texts := w.userTexts(last); !strings.Contains(fmt.Sprint(texts), "summarize what you found") {
			t.Errorf("the last step was not asked for a summary: %q", texts)
		}
		if n := len(fl.runs()); n != 2 {
			t.Errorf("%d commands ran; want 2", n)
		}
	})
}

// noToolUse reports whether a request body, in either format, forbids
// tool calls.
func noToolUse(body map[string]any) bool {
	switch tc := body["tool_choice"].(type) {
	case string:
		return tc == "none"
	case map[string]any:
		return tc["type"] == "none"
	}
	return false
}
