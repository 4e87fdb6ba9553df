package bot

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A 3-step plan's card on Slack, behind the bot's redactor, is a plan
// block edited in place as the plan runs: its steps go pending →
// in_progress → complete, the last to error, with how each ended.
func TestSlackPlanProgressIsAPlanBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		sc, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
			slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
		if err != nil {
			t.Fatal(err)
		}
		conn := &redactedConn{Connector: sc, red: redact.New()}
		root := fake.Mention("C0OPS", "U04ALICE", "", "restart nginx")
		ref, err := conn.Post(t.Context(), connectors.Dest{Platform: slack.Platform, Channel: "C0OPS", Thread: root.TS}, connectors.Message{Text: "Plan needs approval"})
		if err != nil {
			t.Fatal(err)
		}
		prog := approvals.PlanProgress{Goal: "restart nginx", Steps: []approvals.StepProgress{
			{Target: "web-1", Command: "nginx -t"}, {Target: "web-1", Command: "systemctl restart nginx"}, {Target: "web-1", Command: "curl -fsS localhost"}}}
		set := func(statuses ...approvals.StepStatus) {
			for i, s := range statuses {
				prog.Steps[i].Status, prog.Steps[i].Duration = s, 400*time.Millisecond
			}
		}
		P, R, C, E := approvals.StepPending, approvals.StepInProgress, approvals.StepComplete, approvals.StepError
		for _, st := range [][]approvals.StepStatus{{P, P, P}, {R, P, P}, {C, R, P}, {C, C, R}, {C, C, E}} {
			set(st...)
			if st[2] == E {
				prog.Steps[2].ExitCode, prog.Steps[2].Output = 7, "curl: (7) Failed to connect"
			}
			if err := editProgress(t.Context(), conn, ref, "Plan approved by @alice", prog); err != nil {
				t.Fatalf("%v: %v", st, err)
			}
			m, _ := fake.Message("C0OPS", ref.ID)
			p, ok := m.Plan()
			if !ok || len(p.Tasks) != 3 {
				t.Fatalf("the card is no plan block of 3 steps: %+v", m.Blocks)
			}
			for i, s := range st {
				if want := string(stepStatus[s]); p.Tasks[i].Status != want {
					t.Errorf("step %d shows %q; want %q", i+1, p.Tasks[i].Status, want)
				}
			}
		}
		m, _ := fake.Message("C0OPS", ref.ID)
		p, _ := m.Plan()
		if got, want := p.Tasks[2].Output, "exit 7 in 400ms: curl: (7) Failed to connect"; got != want {
			t.Errorf("the failed step's output is %q; want %q", got, want)
		}
		if got, want := p.Tasks[1].Title, "systemctl restart nginx on web-1"; got != want {
			t.Errorf("step 2 is titled %q; want %q", got, want)
		}
	})
}

// Elsewhere (no plan blocks) the card is the text card, edited.
func TestPlanProgressElsewhereIsText(t *testing.T) {
	fc := newFakeConn(connectors.Limits{})
	conn := &redactedConn{Connector: fc, red: redact.New()}
	if showsPlans(conn) {
		t.Fatal("a connector without plan blocks claims them")
	}
	ref, err := conn.Post(t.Context(), connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, connectors.Message{Text: "Plan needs approval"})
	if err != nil {
		t.Fatal(err)
	}
	prog := approvals.PlanProgress{Goal: "restart nginx", Steps: []approvals.StepProgress{{Target: "web-1", Command: "nginx -t", Status: approvals.StepInProgress}}}
	if err := editProgress(t.Context(), conn, ref, "Plan approved by @alice", prog); err != nil {
		t.Fatal(err)
	}
	fc.mu.Lock()
	got := fc.msgs[ref.ID].msg.Text
	fc.mu.Unlock()
	if want := progressCard("Plan approved by @alice", prog).Text; got != want {
		t.Errorf("the card shows %q; want the text card %q", got, want)
	}
}
