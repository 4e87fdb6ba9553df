package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts/sshtest"
)

// A plan with a deny-class step is refused before any card: the model is
// told which step and why, and nothing of it runs.
func TestPlanWithADeniedStepIsRefusedBeforeAnyCard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "plan.log")
	llm := &planLLM{}
	llm.move = func(req fakeLLMRequest) (string, any, string) {
		if text, results := req.lastUser(); strings.Contains(text, "PLAN-GO") && results == 0 {
			return "propose_plan", planArgs("clean up", [2]string{"local", "echo s1 >> " + log}, [2]string{"local", "rm -rf /"}), ""
		}
		return "", nil, "answered"
	}
	_, base := startRun(t, dir, planConfig(t, dir, llm.serve(t)))
	c := &chatClient{t: t, base: base}
	c.listen()
	if answer := c.run("alice", "@opsbot PLAN-GO"); answer != "answered" {
		t.Fatalf("answer %q", answer)
	}
	results := llm.toolResults()
	if len(results) != 1 || !strings.Contains(results[0], "Plan refused, no card posted: step 2 (`rm -rf /` on local) is denied by policy") {
		t.Errorf("the model was told %q; want the refusal naming step 2 and why", results)
	}
	if cards := c.cards(c.threads()[0], "Approve plan"); len(cards) != 0 {
		t.Errorf("a refused plan has %d cards", len(cards))
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("a step of a refused plan ran (%v)", err)
	}
	first := llm.allRequests()[0]
	if !first.offers("propose_plan") || !strings.Contains(fmt.Sprint(first.Messages[0].Content), "propose them as one plan") {
		t.Errorf("the model is not offered propose_plan, or its prompt does not say when to use it")
	}
}

// kill -9 of `opsbot run` while an approved plan's second step runs: the
// next start says in the thread that step 1 ran and step 2 was cut off,
// runs neither again, nor step 3, and offers Continue, Run rollback and
// Stop.
func TestPlanCutByAKillSaysWhatRanAndRunsNothingAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "plan.log")
	sleep := fmt.Sprintf("sleep 600.%06d", rand.IntN(1_000_000))
	steps := [][2]string{{"local", "echo s1 >> " + log}, {"local", "echo s2 >> " + log + "; " + sleep}, {"local", "echo s3 >> " + log}}
	llm := &planLLM{}
	llm.move = func(req fakeLLMRequest) (string, any, string) {
		if text, results := req.lastUser(); strings.Contains(text, "PLAN-GO") && results == 0 {
			return "propose_plan", planArgs("append, wait, append", steps...), ""
		}
		return "", nil, "ack"
	}
	cfg := planConfig(t, dir, llm.serve(t))
	bot, base := startRun(t, dir, cfg)
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
	c.click("bob", card, "approve", id)
	// Step 2 is recorded as started before its card shows it running.
	c.await("step 2 running", func() bool { return strings.Contains(c.texts(thread), "**Step 2** ⏳") })
	bot.Process.Kill() // SIGKILL: nothing of the bot's own clean-up runs
	bot.Wait()
	defer killAll(sleep)

	_, base = startRun(t, dir, cfg)
	awaitInThread(t, base, thread, "was cut off by a restart")
	texts := threadTexts(t, base, thread)
	if !strings.Contains(texts, "step 1 ran (exit 0) and step 2 had started and was cut off (not run again)") {
		t.Errorf("the thread does not say which steps ran:\n%s", texts)
	}
	b, _ := os.ReadFile(log)
	if got := string(b); strings.Count(got, "s1") != 1 || strings.Count(got, "s2") > 1 || strings.Contains(got, "s3") {
		t.Errorf("after the restart the log is %q: a step ran again, or step 3 ran", got)
	}
}

// killAll ends the processes whose command line is cmd (the restart's
// sweep ends them too; this is the test's own clean-up).
func killAll(cmd string) {
	procs, _ := sshtest.Find(cmd)
	for _, p := range procs {
		syscall.Kill(p.Pid, syscall.SIGKILL)
		p.Wait(time.Minute)
		p.Close()
	}
}

// offers reports whether the request offered the model the tool name.
func (r fakeLLMRequest) offers(name string) bool {
	for _, tl := range r.Tools {
		if tl.Function.Name == name {
			return true
		}
	}
	return false
}
