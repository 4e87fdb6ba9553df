package bot

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// An alert's summary takes feedback once its investigation is done, and
// not before (a vote on a summary still being written means nothing),
// named by the investigation's stored turn as an answer's is: without a
// stored turn, no buttons.
func TestAlertSummaryTakesFeedbackWhenDone(t *testing.T) {
	g := &store.AlertGroup{Source: "am", Key: `{}:{alertname="NodeDown"}`, Status: "firing"}
	s := &groupState{Title: "NodeDown"}
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status string
		turn   int64
		want   string
	}{
		{statusRunning, 42, ""},
		{statusDone, 42, "42"},
		{statusDone, 0, ""},
		{statusFailed, 42, ""},
	} {
		s.Investigation.Status, s.Investigation.Turn = tc.status, tc.turn
		if got := rootMessage(g, s, now).Feedback; got != tc.want {
			t.Errorf("an investigation %s with turn %d: its summary's feedback names %q; want %q", tc.status, tc.turn, got, tc.want)
		}
	}
}

// An investigation that ends done: its summary's feedback buttons name
// the turn the investigation stored in the alert thread's session, and a
// click is kept with that turn.
func TestAlertSummaryFeedbackNamesTheInvestigationsTurn(t *testing.T) {
	t.Parallel()
	model := newStalledAgent()
	inv := &Investigator{Agent: model, Hosts: []agent.HostInfo{{Name: "web-1"}}}
	r := newAlertRig(t, investigateConfig(), inv)
	inv.Sessions = r.st.Sessions()
	r.record(groupPayload("disk", "firing"))
	r.desk.drain(context.Background())
	<-model.begun
	close(model.release)
	<-model.idle
	inv.wg.Wait()
	sessions, err := r.st.Sessions().ListSessions(t.Context(), 1)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v; want the alert thread's", sessions, err)
	}
	turn, err := r.st.Sessions().LastTurn(t.Context(), sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatInt(turn.ID, 10)
	root := r.roots()[0].msg
	if root.Feedback != want {
		t.Fatalf("the done summary's feedback names %q; want %q, the investigation's stored turn:\n%s", root.Feedback, want, root.Text)
	}
	c := clicks{feedbacks: r.st}
	for range 2 {
		c.feedback(t.Context(), connectors.Event{Kind: connectors.EventAction, Platform: "web", User: connectors.User{ID: "U1"},
			ActionID: connectors.ActionFeedback, Value: "good:" + root.Feedback})
	}
	days, err := r.st.FeedbackByDay(t.Context(), r.clock.Add(-time.Hour)) // the rig's clock, not the day the test runs
	if err != nil || len(days) != 1 || days[0].Good != 1 {
		t.Errorf("feedback on record %+v, %v; want the click once", days, err)
	}
}
