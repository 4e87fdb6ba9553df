package slack_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"

	goslack "github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A 3-step plan shown as a plan block, edited in place as it runs: each
// step goes pending → in_progress → complete, the last → error, and
// every edit is a plan block Slack takes. The last edit is a golden.
func TestPlanBlockMovesThroughItsSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		rec := &formRecorder{next: fake.Transport()}
		c, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
			slack.Options{HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		root := fake.Mention("C0OPS", "U04ALICE", "", "restart nginx on web")
		dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS}
		ref, err := c.Post(t.Context(), dest, connectors.Message{Text: "Plan needs approval"})
		if err != nil {
			t.Fatal(err)
		}
		steps := []connectors.Task{
			{ID: "step-1", Title: "nginx -t on web-1"}, {ID: "step-2", Title: "systemctl restart nginx on web-1"},
			{ID: "step-3", Title: "curl -fsS localhost on web-1"}}
		want := [][]string{
			{"pending", "pending", "pending"}, {"in_progress", "pending", "pending"}, {"complete", "in_progress", "pending"},
			{"complete", "complete", "in_progress"}, {"complete", "complete", "error"}}
		for _, statuses := range want {
			for i, s := range statuses {
				steps[i].Status = connectors.TaskStatus(s)
				steps[i].Output = ""
				if s == "complete" || s == "error" {
					steps[i].Output = "exit 0 in 0.4s"
				}
			}
			if s := steps[2]; s.Status == connectors.TaskError {
				steps[2].Output = "exit 7 in 0.1s: curl: (7) Failed to connect"
			}
			if err := c.EditPlan(t.Context(), ref, "Plan approved by @alice — Goal: restart nginx on web-1", steps); err != nil {
				t.Fatalf("%v: %v", statuses, err)
			}
			m, _ := fake.Message("C0OPS", ref.ID)
			p, ok := m.Plan()
			if !ok || len(p.Tasks) != 3 {
				t.Fatalf("the message shows no plan block of 3 steps: %+v", m.Blocks)
			}
			for i, s := range statuses {
				if p.Tasks[i].Status != s {
					t.Errorf("step %d shows %q; want %q (statuses %v)", i+1, p.Tasks[i].Status, s, statuses)
				}
			}
		}
		connectortest.Golden(t, "plan_progress", wire(t, rec.last(t)), *update)
	})
}

// rawBlock is a block as JSON, sent as it is.
type rawBlock string

func (b rawBlock) BlockType() goslack.MessageBlockType { return "raw" }
func (b rawBlock) ID() string                          { return "" }
func (b rawBlock) MarshalJSON() ([]byte, error)        { return []byte(b), nil }

// The fake refuses a plan block Slack refuses: a status Slack does not
// document, a field it does not know, a step without task_id, two steps
// of one id, output that is no rich_text, a plan beside task cards.
func TestFakeRefusesInvalidPlanBlocks(t *testing.T) {
	fake := slackfake.New()
	defer fake.Close()
	api := goslack.New(slackfake.BotToken, goslack.OptionAPIURL(fake.URL))
	card := func(extra string) string {
		return `{"type":"task_card","task_id":"s1","title":"nginx -t"` + extra + `}`
	}
	plan := func(tasks string) rawBlock { return rawBlock(`{"type":"plan","title":"Plan","tasks":[` + tasks + `]}`) }
	good := plan(card(`,"status":"complete","output":{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"exit 0"}]}]}`))
	if _, _, err := api.PostMessage("C0OPS", goslack.MsgOptionBlocks(good)); err != nil {
		t.Fatalf("a valid plan block is refused: %v", err)
	}
	bad := map[string][]goslack.Block{
		"status completed": {plan(card(`,"status":"completed"`))},
		"unknown field":    {plan(card(`,"progress":50`))},
		"no task_id":       {plan(`{"type":"task_card","title":"nginx -t"}`)},
		"duplicate id":     {plan(card("") + "," + card(""))},
		"output as string": {plan(card(`,"output":"exit 0"`))},
		"plan and cards":   {plan(card("")), rawBlock(card(""))},
	}
	for name, blocks := range bad {
		_, _, err := api.PostMessage("C0OPS", goslack.MsgOptionBlocks(blocks...))
		if err == nil || err.Error() != "invalid_blocks" {
			t.Errorf("%s: Slack answers %v; want invalid_blocks", name, err)
		}
	}
	if !json.Valid([]byte(good)) {
		t.Fatal("the valid block is no JSON")
	}
}
