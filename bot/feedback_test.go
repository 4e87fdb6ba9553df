package bot

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
	"github.com/opsbot/opsbot/store"
)

// A click of an answer's feedback buttons is kept with its turn, counted,
// and answered to the clicker alone; a value that is not good or bad is
// neither.
func TestFeedbackClickIsRecordedAndThankedPrivately(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	c := clicks{feedbacks: st, metrics: m}
	for _, v := range []string{"good:1", "bad:2", "meh:3"} {
		c.click(ctx, connectors.Event{Kind: connectors.EventAction, Platform: "slack", User: connectors.User{ID: "U1"},
			ActionID: connectors.ActionFeedback, Value: v,
			Respond: func(_ context.Context, text string) error { said = append(said, text); return nil }})
	}
	days, err := st.FeedbackByDay(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].Good != 1 || days[0].Bad != 1 {
		t.Errorf("feedback on record %+v; want one good and one bad", days)
	}
	if len(said) != 2 {
		t.Errorf("the clicker was answered %d times (%q); want 2, privately", len(said), said)
	}
	if got := testutil.ToFloat64(m.feedback.WithLabelValues("slack", "good")); got != 1 {
		t.Errorf("opsbot_feedback_total{slack,good} = %v; want 1", got)
	}
}

// An answer on Slack, end to end: its feedback buttons name the stored
// turn that produced it, and the clicks delivered over Socket Mode are
// kept with that turn, one say per person (the last wins: good then bad
// is bad); the metric counts changes of a say, not its repeats.
func TestSlackFeedbackIsKeptByTurnOncePerPerson(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	b, stop := startBot(t, t.TempDir(), conn, botOptions{model: &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){text("Web is up.")}}, metrics: m})
	t.Cleanup(stop)
	connectSlack(t, fake, conn, b)
	root := fake.Mention("C0OPS", "U0ALICE", "", "is web up")
	var answer string
	var values []string
	if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, msg := range s.Thread("C0OPS", root.Thread) {
			if values = feedbackValues(msg); msg.Bot && !msg.Streaming && len(values) > 0 {
				answer = msg.TS
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the answer has no feedback buttons:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	st := storeOf(b)
	sessions, err := st.Sessions().ListSessions(t.Context(), 1)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v; want the thread's", sessions, err)
	}
	turn, err := st.Sessions().LastTurn(t.Context(), sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(turn.ID, 10)
	if want := []string{"good:" + id, "bad:" + id}; !slices.Equal(values, want) {
		t.Fatalf("feedback buttons %q; want %q (the stored turn's id)", values, want)
	}

	clicks := []struct{ user, value string }{
		{"U0ALICE", "good"}, {"U0ALICE", "good"}, {"U0ALICE", "good"}, {"U0ALICE", "bad"}, {"U0ALICE", "bad"}, {"U0BOB", "good"},
	}
	for i, c := range clicks {
		if fake.ClickFeedback("C0OPS", answer, c.user, c.value+":"+id) == "" {
			t.Fatalf("the answer has no %s button", c.value)
		}
		// The thanks is the last thing a click does.
		if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool { return len(s.Ephemerals()) > i }) {
			t.Fatalf("click %d (%s by %s) was not answered", i+1, c.value, c.user)
		}
	}
	days, err := st.FeedbackByDay(t.Context(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].Good != 1 || days[0].Bad != 1 {
		t.Errorf("feedback on record %+v; want alice's last say (bad) and bob's (good)", days)
	}
	for value, want := range map[string]float64{"good": 2, "bad": 1} {
		if got := testutil.ToFloat64(m.feedback.WithLabelValues("slack", value)); got != want {
			t.Errorf("opsbot_feedback_total{slack,%s} = %v; want %v (alice's good and bob's; alice's change to bad)", value, got, want)
		}
	}
}

// feedbackValues are the values of a Slack message's feedback buttons.
func feedbackValues(m slackfake.Message) []string {
	var out []string
	for _, b := range m.Blocks {
		for _, e := range b.Elements {
			for _, fb := range []*slackfake.FeedbackButton{e.Positive, e.Negative} {
				if b.Type == "context_actions" && fb != nil {
					out = append(out, fb.Value)
				}
			}
		}
	}
	return out
}
