package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/store"
)

// planSteps are three approve-class commands that each append a line to
// log: their side effects say which ran, and how often.
func planSteps(log string) [][2]string {
	return [][2]string{{"local", "echo s1 >> " + log}, {"local", "echo s2 >> " + log}, {"local", "echo s3 >> " + log}}
}

// Issue 31's acceptance, through the real binary and the web chat: a
// 3-step plan of approve-class commands is one card; the requester's own
// click runs nothing and says why; one click by bob runs exactly those
// three commands, once each, in order; the model reads every step's
// result after the plan ends; every transition is audited. Then 30
// scripted deviations from the approved plan — changed flags, extra,
// dropped and reordered steps, other hosts, whitespace and quoting that
// change bytes, the goal, and the approved commands run directly — run
// nothing without a new card.
func TestPlanApprovedOnceRunsExactlyItsSteps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "plan.log")
	steps := planSteps(log)
	devs := planDeviations(log, steps)
	llm := &planLLM{}
	llm.move = func(req fakeLLMRequest) (string, any, string) {
		text, results := req.lastUser()
		switch {
		case strings.Contains(text, "PLAN-GO") && results == 0:
			return "propose_plan", planArgs("append three lines", steps...), ""
		case strings.Contains(text, "DEVIATE") && results < len(devs):
			return devs[results].tool, devs[results].args, ""
		case strings.Contains(text, "DEVIATE"):
			return "", nil, "deviations-done"
		case strings.HasPrefix(text, "[opsbot note, not the person's words] The plan"):
			return "", nil, "plan-result-seen"
		}
		return "", nil, "ack"
	}
	_, base := startRun(t, dir, planConfig(t, dir, llm.serve(t)))
	c := &chatClient{t: t, base: base}
	c.listen()
	thread := fmt.Sprint(c.post("/api/messages", map[string]any{"channel": "ops", "user": "alice", "text": "@opsbot PLAN-GO"})["thread"])

	var card, id string
	c.await("the plan's card", func() bool {
		for m, v := range c.cards(thread, "Approve plan") {
			card, id = m, v
		}
		return card != ""
	})
	if text := c.texts(thread); strings.Count(text, "— approve") != 3 || !strings.Contains(text, "Goal: append three lines") {
		t.Errorf("the card does not show the goal and three approve-class steps:\n%s", text)
	}
	c.click("alice", card, "approve", id)
	c.await("the requester's click refused", func() bool {
		return strings.Contains(c.texts(thread), "you asked for this plan; someone else has to approve it")
	})
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("the requester's own click ran something (%v)", err)
	}
	c.click("bob", card, "approve", id)
	c.await("the plan done", func() bool { return strings.Contains(c.texts(thread), "Plan done: every step ran") })
	if b, _ := os.ReadFile(log); string(b) != "s1\ns2\ns3\n" {
		t.Fatalf("after one approval the log is %q, want each step once, in order", b)
	}
	c.await("the model's answer to the results", func() bool { return strings.Contains(c.texts(thread), "plan-result-seen") })
	if note := modelNote(llm); !strings.Contains(note, "step 3 `echo s3 >> "+log+"` on local: complete (exit 0)") {
		t.Errorf("the model was not told every step's result:\n%s", note)
	}
	assertPlanAudit(t, dir, id)

	c.post("/api/messages", map[string]any{"channel": "ops", "user": "alice", "text": "@opsbot DEVIATE", "thread": thread})
	denied := map[string]bool{}
	c.await("the deviations done", func() bool {
		for m, v := range c.cards(thread, "Approve") { // a command's card: bob denies it
			if !denied[m] {
				denied[m] = true
				c.click("bob", m, "deny", v)
			}
		}
		return strings.Contains(c.texts(thread), "deviations-done")
	})
	if b, _ := os.ReadFile(log); string(b) != "s1\ns2\ns3\n" {
		t.Errorf("a deviation ran without a new card: the log is %q", b)
	}
	assertDeviationsAsked(t, llm, c.cards(thread, "Approve plan"), id, len(denied), len(devs))
}

// assertDeviationsAsked checks that every deviation was either refused or
// is a new request of its own: a plan card of its own, or a command's
// card (denied).
func assertDeviationsAsked(t *testing.T, llm *planLLM, planCards map[string]string, approved string, commandCards, deviations int) {
	t.Helper()
	proposed, refused, notRun := 0, 0, 0
	for _, r := range llm.toolResults() {
		switch {
		case strings.HasPrefix(r, "Plan proposed"):
			proposed++
		case strings.HasPrefix(r, "Plan refused"):
			refused++
		case strings.Contains(r, "not run: the approval request was denied"):
			notRun++
		}
	}
	proposed-- // the approved plan's
	ids := map[string]bool{}
	for _, v := range planCards {
		ids[v] = true
	}
	if ids[approved] || len(ids) != proposed {
		t.Errorf("plan cards %d (the approved one among them: %v), want one new for each of %d proposed", len(ids), ids[approved], proposed)
	}
	if proposed+refused+notRun != deviations || notRun != commandCards {
		t.Errorf("of %d deviations: %d new plans, %d refused, %d commands not run after %d cards; want every one asked anew",
			deviations, proposed, refused, notRun, commandCards)
	}
	t.Logf("%d deviations: %d new plan cards, %d refused before any card, %d commands with a card of their own, denied", deviations, proposed, refused, notRun)
}

// modelNote is opsbot's note on a plan's end, as the model read it.
func modelNote(llm *planLLM) string {
	for _, r := range llm.allRequests() {
		if text, _ := r.lastUser(); strings.HasPrefix(text, "[opsbot note, not the person's words] The plan") {
			return text
		}
	}
	return ""
}

// assertPlanAudit checks the audit trail of plan id: proposed with its
// hash, approved by bob, each step started and finished, done.
func assertPlanAudit(t *testing.T, dir, id string) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(dir, "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trail, err := st.Audit().AuditTrail(context.Background(), "approval:"+id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range trail {
		if strings.HasPrefix(e.Action, "plan.") {
			got = append(got, e.Action+" by "+e.Actor)
		}
		if e.Action == "plan.proposed" && !strings.Contains(string(e.Detail), `"hash":"`) {
			t.Errorf("plan.proposed does not record the plan's hash: %s", e.Detail)
		}
	}
	want := []string{"plan.proposed by web:alice", "plan.approved by web:bob"}
	for range 3 {
		want = append(want, "plan.step_started by opsbot", "plan.step_finished by opsbot")
	}
	want = append(want, "plan.done by opsbot")
	if !slices.Equal(got, want) {
		t.Errorf("audit trail of the plan:\n got %q\nwant %q", got, want)
	}
}
