package bot

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A process killed (kill -9) mid-answer on Slack: the next start's
// recovery ends the cut answer with the note and, as under any final
// answer, its feedback buttons, named by the stored turn that produced
// it; a person's clicks on them, delivered to the new process, are kept
// with that turn, once.
func TestRestartEndsTheCutAnswerWithFeedback(t *testing.T) {
	t.Parallel()
	wait, release := held(t)
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-wait", "run_command", `{"target":"local","command":"`+wait+`"}`),
		text("Done."),
	}}
	fake, dir, dead, _ := severableSlackBot(t, m)

	root := fake.Mention("C0OPS", "U0ALICE", "", "check web")
	if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		cards, _ := cardsOf(s, "C0OPS", root.Thread)
		return cards["call-wait"].Status == "in_progress"
	}) {
		release()
		t.Fatalf("no card in progress while the command runs:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	// kill -9: nothing more of this process reaches Slack, its socket
	// with it.
	dead.cut.Store(true)
	fake.DropSockets()
	defer release()

	fresh, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
		slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	b2, stopFresh := startBot(t, dir, fresh, botOptions{})
	t.Cleanup(stopFresh)
	connectSlack(t, fake, fresh, b2)

	st := storeOf(b2)
	sessions, err := st.Sessions().ListSessions(t.Context(), 1)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v; want the thread's", sessions, err)
	}
	turn, err := st.Sessions().LastTurn(t.Context(), sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(turn.ID, 10)
	var answer slackfake.Message
	var values []string
	for _, msg := range fake.Thread("C0OPS", root.Thread) {
		if v := feedbackValues(msg); msg.Bot && len(v) > 0 {
			answer, values = msg, append(values, v...)
		}
	}
	if want := []string{"good:" + id, "bad:" + id}; !slices.Equal(values, want) || !strings.Contains(answer.Shown(), "opsbot restarted before this answer finished") {
		t.Fatalf("feedback buttons %q on %q; want %q (the stored turn's id) once, under the cut answer with its note:\n%s",
			values, answer.Shown(), want, fake.ThreadText("C0OPS", root.Thread))
	}
	for i := range 2 {
		if fake.ClickFeedback("C0OPS", answer.TS, "U0ALICE", "good:"+id) == "" {
			t.Fatal("the cut answer has no good button")
		}
		if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool { return len(s.Ephemerals()) > i }) {
			t.Fatalf("click %d was not answered", i+1)
		}
	}
	days, err := st.FeedbackByDay(t.Context(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].Good != 1 || days[0].Bad != 0 {
		t.Errorf("feedback on record %+v; want alice's good, once", days)
	}
}

// An agent turn cut by a restart while its command waits for approval,
// resumed once the approval is decided: the resumed answer ends, as any
// other, with feedback buttons named by its stored turn.
func TestResumedAnswerHasFeedback(t *testing.T) {
	t.Parallel()
	target := filepath.Join(t.TempDir(), "runs.txt")
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"echo ran >> `+target+`"}`),
		text("Ran it."),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "append a line please")
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	h.restart(botOptions{model: m})
	h.click("bob", h.msg(ref), ref, ActionApprove)
	h.eventually("the model's answer after the run", h.has("t1", "Ran it."))
	h.settled("t1")
	answer, _, _ := h.find("t1", "Ran it.")
	sessions, err := h.st.Sessions().ListSessions(t.Context(), 1)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v; want the thread's", sessions, err)
	}
	turn, err := h.st.Sessions().LastTurn(t.Context(), sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(turn.ID, 10); answer.msg.Feedback != want {
		t.Errorf("the resumed answer's feedback names %q; want %q, its stored turn", answer.msg.Feedback, want)
	}
}
