package bot

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/approvals"
)

// investigatedThread starts a bot over the scripted model m and an alert
// desk whose investigations run on the same model and the same history,
// as cmd/opsbot wires them; it delivers one firing alert routed
// `investigate: true` and returns the alert thread's id.
func investigatedThread(t *testing.T, m *model) (*harness, *AlertDesk, string) {
	t.Helper()
	h := newHarness(t, approvals.GateConfig{}, m)
	inv := &Investigator{Agent: &agent.Agent{Provider: m, History: persist.History{Store: h.st}, Notices: persist.Notices{Store: h.st}, Tools: agent.NewRegistry()},
		Sessions: h.st.Sessions(), Threads: h.bot}
	desk := NewAlertDesk(AlertDeps{Store: h.st.Alerts(), Platforms: h.bot.platforms, Config: investigateConfig(), Investigator: inv})
	t.Cleanup(desk.Close)
	if _, err := h.st.Alerts().RecordDelivery(context.Background(), "am", "", groupPayload("disk", "firing")); err != nil {
		t.Fatal(err)
	}
	desk.drain(context.Background())
	g, err := h.st.Alerts().AlertGroup(context.Background(), "am", "{}:disk")
	if err != nil || g.Thread == "" {
		t.Fatalf("no alert thread: %v %+v", err, g)
	}
	return h, desk, g.Thread
}

// anywhere reports whether any message, a root included, shows s.
func (h *harness) anywhere(s string) func() bool {
	return func() bool { return strings.Contains(h.dump(), s) }
}

// A mention in an alert's thread while its investigation runs waits for
// it, says so, and then runs: both answer, and the session's history has
// the investigation, then the mention.
func TestAlertMentionWaitsForTheInvestigation(t *testing.T) {
	t.Parallel()
	begun, release := make(chan struct{}), make(chan struct{})
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
			close(begun)
			<-release
			text("Looked.\nSuspected cause: a full disk")(ctx, req, yield)
		},
		text("The disk is /var, 98% full."),
	}}
	h, _, thread := investigatedThread(t, m)
	released := false
	t.Cleanup(func() { // a failed test does not leave the investigation stalled
		if !released {
			close(release)
		}
	})
	<-begun
	h.say("alice", thread, "which disk?")
	h.eventually("the queued note", h.has(thread, "queued behind the investigation"))
	if n := len(m.requests()); n != 1 {
		t.Fatalf("the mention's turn began while the investigation ran: %d model calls", n)
	}
	close(release)
	released = true
	h.eventually("the mention's answer", h.has(thread, "The disk is /var"))
	if i := h.position("Suspected cause: a full disk"); i < 0 || i > h.position("The disk is /var") {
		t.Errorf("the investigation's answer is not posted before the mention's: %s", h.dump())
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	var roles []string
	for _, msg := range reqs[1].Messages {
		roles = append(roles, string(msg.Role)+":"+firstLine(msg))
	}
	got := strings.Join(roles, " | ")
	for i, want := range []string{"user:", "assistant:Looked.", "user:which disk?"} {
		if i >= len(reqs[1].Messages) || !strings.HasPrefix(roles[i], want) {
			t.Fatalf("history out of order; want %q at %d: %s", want, i, got)
		}
	}
	if !strings.Contains(flatten(reqs[1].Messages[0]), "disk") {
		t.Errorf("the first message is not the investigation's prompt: %s", got)
	}
}

// A person's Stop in an alert's thread stops its investigation as it
// stops an answer: the model's short summary is posted, and the root
// says who stopped it.
func TestAlertInvestigationStoppedByAPerson(t *testing.T) {
	t.Parallel()
	begun := make(chan struct{})
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
			close(begun)
			blockUntilCancelled(ctx, req, yield)
		},
		text("So far: a full disk."),
	}}
	h, desk, thread := investigatedThread(t, m)
	<-begun
	h.say("alice", thread, "stop")
	h.eventually("the summary", h.has(thread, "So far: a full disk."))
	h.eventually("the root's stop", h.anywhere("**Investigation:** stopped by @alice"))
	desk.Close() // the investigation has saved how it ended
	g, err := h.st.Alerts().AlertGroup(context.Background(), "am", "{}:disk")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(g.State), `"status":"stopped"`) {
		t.Errorf("group state: %s", g.State)
	}
}

func firstLine(m agent.Message) string {
	s, _, _ := strings.Cut(flatten(m), "\n")
	return s
}

func flatten(m agent.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
