package bot

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

func (f *fakeTurns) lifeCtx(ctx context.Context) context.Context { return ctx }

var _ answerOut = (*fakeTurns)(nil)

// failingTurnStore records nothing.
type failingTurnStore struct{ err error }

func (f failingTurnStore) BeginTurn(context.Context, int64) (store.Turn, error) {
	return store.Turn{}, f.err
}
func (f failingTurnStore) EndTurn(context.Context, int64, store.TurnStatus) (bool, error) {
	return false, f.err
}
func (f failingTurnStore) RecordFollowUp(context.Context, store.FollowUp) error { return f.err }

// postedCards counts the cards posted and the refreshes.
type postedCards struct{ posted, refreshed int }

func (c *postedCards) post(context.Context, connectors.Event, string) { c.posted++ }
func (c *postedCards) refresh(context.Context, connectors.Event)      { c.refreshed++ }
func (c *postedCards) refreshAll(context.Context)                     {}

// scriptedAgent emits its events, then ends with err; Resume reports
// resumed.
type scriptedAgent struct {
	events  []agent.Event
	err     error
	resumed bool
}

func (a scriptedAgent) Turn(_ context.Context, _ agent.SessionInfo, _ string, emit func(agent.Event)) error {
	for _, e := range a.events {
		emit(e)
	}
	return a.err
}
func (a scriptedAgent) Resume(ctx context.Context, sess agent.SessionInfo, emit func(agent.Event)) (bool, error) {
	return a.resumed, a.Turn(ctx, sess, "", emit)
}

// Answers over fakes: with no model the thread is told how to turn it
// on; an answer streams, its card is posted, what it ran is listed after
// it, and an answer out of steps says so in words — while a store that
// cannot record the turn or the follow-up is logged, not a failure.
func TestAnswersOverFakes(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	out := &fakeTurns{fakeOut: &fakeOut{c: conn}}
	cards := &postedCards{}
	var logged strings.Builder
	an := &answers{answerOut: out, noAgentHelp: "no model: set ANTHROPIC_API_KEY", turns: failingTurnStore{errors.New("disk I/O error")}, recordFollowUp: failingTurnStore{errors.New("disk I/O error")}.RecordFollowUp,
		cards: cards, log: logTo(&logged)}
	ev := func(thread string) connectors.Event {
		return connectors.Event{Platform: "fake", Channel: "C1", Thread: thread}
	}
	sess := agent.SessionInfo{ID: 1}

	an.turn(t.Context(), ev("off"), sess)
	if said := out.said(); len(said) != 1 || said[0] != "no model: set ANTHROPIC_API_KEY" {
		t.Errorf("with no model the thread was told %q", said)
	}

	an.agent = scriptedAgent{err: agent.ErrMaxSteps, events: []agent.Event{
		{Kind: agent.TextDelta, Text: "Checking the disk"},
		{Kind: agent.ApprovalPending, Approval: &agent.PendingApproval{ID: "a1", Command: "rm -rf /var/tmp/x", Target: "web-1"}},
		{Kind: agent.ToolFinished, Tool: "run_command", Summary: "exit 0",
			Runs: []agent.CommandRun{{Host: "web-1", Command: "df -h", Output: "/dev/sda1 91%"}}},
	}}
	an.turn(t.Context(), ev("steps"), sess)
	msgs := conn.thread("steps")
	if len(msgs) != 2 {
		t.Fatalf("the thread holds %d messages; want the answer and what ran", len(msgs))
	}
	if got := msgs[0].msg.Text; !strings.Contains(got, "Checking the disk") || !strings.Contains(got, "used all the steps") {
		t.Errorf("the answer reads %q", got)
	}
	if got := msgs[1].msg.Text; !strings.Contains(got, "**What ran**") || !strings.Contains(got, "`df -h` on web-1") {
		t.Errorf("what ran reads %q", got)
	}
	if cards.posted != 1 || cards.refreshed < 2 {
		t.Errorf("cards posted %d, refreshed %d; want 1 posted, refreshed after the tool and the turn", cards.posted, cards.refreshed)
	}
	for _, want := range []string{"record turn", "record approval follow-up"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the failing store is not logged (%q): %s", want, logged.String())
		}
	}

	an.agent = scriptedAgent{}
	if an.resume(t.Context(), ev("moved-on"), sess) {
		t.Error("a resume with no call to resume reported one")
	}
}
