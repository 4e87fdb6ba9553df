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
	sess, _, _ := h.st.SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t9"})
	if _, err := h.bot.Jobs.Start(ctx, store.Job{SessionID: sess.ID, Host: "local", Requester: "alice",
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
