package slack_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// formRecorder keeps the form of every chat.postMessage and chat.update
// call that passes through it, on its way to the fake.
type formRecorder struct {
	next http.RoundTripper

	mu    sync.Mutex
	forms []url.Values
}

func (r *formRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/chat.") {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.forms = append(r.forms, form)
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

// last is the form of the last call recorded.
func (r *formRecorder) last(t *testing.T) url.Values {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.forms) == 0 {
		t.Fatal("no message was posted or updated")
	}
	return r.forms[len(r.forms)-1]
}

// wire is what a chat.postMessage or chat.update call carries, as a reviewer reads it:
// every form field but the token, its blocks as JSON.
func wire(t *testing.T, form url.Values) []byte {
	t.Helper()
	out := map[string]any{}
	for k := range form {
		switch k {
		case "token":
		case "blocks", "chunks":
			var blocks any
			if err := json.Unmarshal([]byte(form.Get(k)), &blocks); err != nil {
				t.Fatalf("blocks are not JSON: %v", err)
			}
			out[k] = blocks
		default:
			out[k] = form.Get(k)
		}
	}
	return connectortest.JSON(t, out)
}

// The Block Kit payload of each representative message, and of a card's
// edit once decided, as Slack receives it (botkube's pkg/bot/testdata/*.golden.json): mrkdwn, sections cut
// within their limit, fields, context and buttons with their block ids.
// go test ./connectors/slack -run Golden -update rewrites them.
func TestBlockKitGolden(t *testing.T) {
	// In a bubble: chat.postMessage's budget (one a second per channel)
	// passes on the bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		rec := &formRecorder{next: fake.Transport()}
		cfg := slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}
		c, err := slack.New(cfg, slack.Options{HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		root := fake.Mention("C0OPS", "U04ALICE", "", "is nginx up on web-1?")
		dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U04ALICE"}}
		msgs := connectortest.Messages(c.Limits(), "U04ALICE", "U04BOB")
		refs := map[string]connectors.Ref{}
		for _, name := range slices.Sorted(maps.Keys(msgs)) {
			if refs[name], err = c.Post(t.Context(), dest, msgs[name]); err != nil {
				t.Fatalf("%s: post: %v", name, err)
			}
			connectortest.Golden(t, name, wire(t, rec.last(t)), *update)
		}
		// A decided card is the pending card edited: its buttons go.
		if err := c.Edit(t.Context(), refs["card_pending"], msgs["card_approved"]); err != nil {
			t.Fatalf("edit: %v", err)
		}
		connectortest.Golden(t, "card_decided_edit", wire(t, rec.last(t)), *update)

		// An answer's end, with its feedback buttons.
		final := connectors.Message{Text: "nginx is up on web-1.", Context: "✓ `systemctl is-active nginx` on web-1", Feedback: "turn-42"}
		if _, err := c.Post(t.Context(), dest, final); err != nil {
			t.Fatalf("post with feedback: %v", err)
		}
		connectortest.Golden(t, "answer_feedback", wire(t, rec.last(t)), *update)
		streamGoldens(t, c, rec, dest, final)

		summaryGoldens(t, c, rec, dest)
		if n := fake.Refusals("invalid_blocks"); n != 0 {
			t.Errorf("the fake refused %d of the corpus's payloads as invalid_blocks; want none", n)
		}
	})
}

// summaryGoldens: an alert's summary with its feedback buttons
// (context_actions), a finished plan as text, and the plan block it is
// edited into, every step final.
func summaryGoldens(t *testing.T, c *slack.Connector, rec *formRecorder, dest connectors.Dest) {
	refs := map[string]connectors.Ref{}
	msgs := connectortest.Summaries()
	for _, name := range slices.Sorted(maps.Keys(msgs)) {
		var err error
		if refs[name], err = c.Post(t.Context(), dest, msgs[name]); err != nil {
			t.Fatalf("%s: post: %v", name, err)
		}
		connectortest.Golden(t, name, wire(t, rec.last(t)), *update)
	}
	if err := c.EditPlan(t.Context(), refs["plan_finished"], connectortest.PlanTitle, connectortest.PlanSteps()); err != nil {
		t.Fatalf("edit plan: %v", err)
	}
	connectortest.Golden(t, "plan_block_finished", wire(t, rec.last(t)), *update)
}

// streamGoldens: a stream's start (timeline display), a task card's
// update, and its stop with the feedback buttons.
func streamGoldens(t *testing.T, c *slack.Connector, rec *formRecorder, dest connectors.Dest, final connectors.Message) {
	ref, err := c.StartStream(t.Context(), dest, connectors.Message{Text: "Checking. "})
	if err != nil {
		t.Fatalf("start stream: %v", err)
	}
	connectortest.Golden(t, "stream_start", wire(t, rec.last(t)), *update)
	task := connectors.Task{ID: "toolu_01", Title: "`systemctl is-active nginx` on web-1", Status: connectors.TaskComplete,
		Output: "web-1 · exit 0 · 0.4s"}
	if err := c.UpdateTask(t.Context(), ref, task); err != nil {
		t.Fatalf("task update: %v", err)
	}
	connectortest.Golden(t, "stream_task_update", wire(t, rec.last(t)), *update)
	final.Text = "Checking. " + final.Text
	if err := c.StopStream(t.Context(), ref, final); err != nil {
		t.Fatalf("stop stream: %v", err)
	}
	connectortest.Golden(t, "stream_stop_feedback", wire(t, rec.last(t)), *update)
}
