package bot

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// A job that ends wakes the agent in its thread (agent.on_job_end: turn):
// the model reads the job's output and its answer is posted, without
// anyone speaking.
func TestFinishedJobWakesTheAgent(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		text("The backup finished; 1 table was skipped: audit_log."),
	}}
	conn := newFakeConn(webLimits)
	conn.name = "web"
	h := &harness{t: t, conn: conn, dir: t.TempDir()}
	h.bot, h.stop = startBot(t, h.dir, conn, botOptions{gate: approvals.GateConfig{}, model: m, jobEndTurns: true})
	h.st = storeOf(h.bot)
	t.Cleanup(h.stop)
	ctx := context.Background()
	sess, _, _ := h.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t9"})
	if _, err := jobsOf(h.bot).Start(ctx, hosts.Job{SessionID: sess.ID, Host: "local", Requester: "alice",
		Command: "printf 'dumped users\\nskipped: audit_log\\n'"}, "", hosts.Confinement{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the agent's answer", h.has("t9", "1 table was skipped: audit_log"))
	reqs := m.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls; want 1", len(reqs))
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	var sent strings.Builder
	for _, b := range last.Content {
		sent.WriteString(b.Text)
	}
	if !strings.Contains(sent.String(), "skipped: audit_log") || !strings.Contains(sent.String(), "not the person's words") {
		t.Errorf("the model was not given the job's output as opsbot's note: %q", sent.String())
	}
}

// The turn a job's end asks for is in the inbox like any event: queued
// behind a running command when opsbot stops, it runs after the restart,
// once, and the job's notice is not posted again. Before, it was queued in
// memory only, after its notification was marked delivered and injected:
// a stop or a crash lost it for good (issue 12, item 0).
func TestJobEndTurnSurvivesAStop(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		text("The backup finished; 1 table was skipped: audit_log."),
	}}
	opt := botOptions{gate: approvals.GateConfig{}, model: m, jobEndTurns: true}
	conn := newFakeConn(webLimits)
	conn.name = "web"
	h := &harness{t: t, conn: conn, dir: t.TempDir()}
	h.bot, h.stop = startBot(t, h.dir, conn, opt)
	h.st = storeOf(h.bot)
	t.Cleanup(h.stop)
	h.say("alice", "t9", "run local sleep 30") // the thread is busy: the job's turn waits behind it
	h.eventually("the run to start", h.has("t9", "running `sleep 30`"))
	sess, _, _ := h.st.Sessions().SessionFor(context.Background(), store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t9"})
	if _, err := jobsOf(h.bot).Start(context.Background(), hosts.Job{SessionID: sess.ID, Host: "local", Requester: "alice",
		Command: "printf 'skipped: audit_log\\n'"}, "", hosts.Confinement{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the job's notice", h.has("t9", "🔔"))

	h.restart(opt)
	h.eventually("the job's turn after the restart", h.has("t9", "1 table was skipped: audit_log"))
	h.restart(opt)
	h.settled("t9")
	if n := len(m.requests()); n != 1 {
		t.Errorf("the job's turn ran %d times, want 1: %s", n, h.dump())
	}
	if n := h.count("t9", "🔔"); n != 1 {
		t.Errorf("the job's notice was posted %d times, want 1: %s", n, h.dump())
	}
}
