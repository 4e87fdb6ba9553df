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

// formRecorder keeps the form of every chat.* and assistant.threads.*
// call that passes through it, on its way to the fake.
type formRecorder struct {
	next http.RoundTripper

	mu      sync.Mutex
	forms   []url.Values
	methods []string // the method of each form
}

func (r *formRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/chat.") || strings.Contains(req.URL.Path, "/assistant.") {
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
		r.methods = append(r.methods, req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:])
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

// lastOf is the form of the last call of method recorded.
func (r *formRecorder) lastOf(t *testing.T, method string) url.Values {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.forms) - 1; i >= 0; i-- {
		if r.methods[i] == method {
			return r.forms[i]
		}
	}
	t.Fatalf("no %s call was made", method)
	return nil
}

// wire is what a chat.postMessage or chat.update call carries, as a reviewer reads it:
// every form field but the token, its blocks as JSON.
func wire(t *testing.T, form url.Values) []byte {
	t.Helper()
	out := map[string]any{}
	for k := range form {
		switch k {
		case "token":
		case "blocks", "chunks", "prompts":
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
		cardGoldens(t, c, rec, dest)
		messageCardGoldens(t, c, rec, dest)
		controlGoldens(t, c, rec, dest)
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

// cardGoldens: a task card as it first shows (pending), its update to
// in_progress, and the stop of a stream whose card is still open, which
// closes the card in the stop's chunks (a stopped stream's cards can no
// longer change).
func cardGoldens(t *testing.T, c *slack.Connector, rec *formRecorder, dest connectors.Dest) {
	ref, err := c.StartStream(t.Context(), dest, connectors.Message{Text: "Looking at the disk. "})
	if err != nil {
		t.Fatalf("start stream: %v", err)
	}
	task := connectors.Task{ID: "toolu_02", Title: "`du -sh /var/log` on web-1", Status: connectors.TaskPending}
	if err := c.UpdateTask(t.Context(), ref, task); err != nil {
		t.Fatalf("pending card: %v", err)
	}
	connectortest.Golden(t, "stream_task_pending", wire(t, rec.last(t)), *update)
	task.Status, task.Details = connectors.TaskInProgress, "running for 6s"
	if err := c.UpdateTask(t.Context(), ref, task); err != nil {
		t.Fatalf("in-progress card: %v", err)
	}
	connectortest.Golden(t, "stream_task_in_progress", wire(t, rec.last(t)), *update)
	if err := c.StopStream(t.Context(), ref, connectors.Message{Text: "Looking at the disk. Stopped."}); err != nil {
		t.Fatalf("stop stream: %v", err)
	}
	connectortest.Golden(t, "stream_stop_closing", wire(t, rec.last(t)), *update)
}

// messageCardGoldens: an answer going on by edits with its cards in its
// own message (task_card blocks above its text): as posted, its command
// running, and edited, the command ended and the words come; and an
// answer whose command comes before its words, opened as a stream with
// the card in chat.startStream's chunks.
func messageCardGoldens(t *testing.T, c *slack.Connector, rec *formRecorder, dest connectors.Dest) {
	stop := connectors.Button{ActionID: "stop", Value: "slack/C0OPS/" + dest.Thread, Label: "Stop", Style: connectors.StyleDanger}
	task := connectors.Task{ID: "toolu_03", Title: "`df -h /var` on web-1", Status: connectors.TaskInProgress}
	ref, err := c.Post(t.Context(), dest, connectors.Message{Context: "checking the disk", Buttons: []connectors.Button{stop}, Tasks: []connectors.Task{task}})
	if err != nil {
		t.Fatalf("post with a card: %v", err)
	}
	connectortest.Golden(t, "message_card_running", wire(t, rec.last(t)), *update)
	task.Status, task.Output = connectors.TaskComplete, "web-1 · exit 0 · 0.2s"
	edit := connectors.Message{Text: "/var is 91% full.", Feedback: "turn-43", Tasks: []connectors.Task{task}}
	if err := c.Edit(t.Context(), ref, edit); err != nil {
		t.Fatalf("edit with a card: %v", err)
	}
	connectortest.Golden(t, "message_card_complete", wire(t, rec.last(t)), *update)
	first := connectors.Task{ID: "toolu_04", Title: "`uptime` on web-1", Status: connectors.TaskInProgress}
	sref, err := c.StartStream(t.Context(), dest, connectors.Message{Tasks: []connectors.Task{first}})
	if err != nil {
		t.Fatalf("start a stream with a card: %v", err)
	}
	connectortest.Golden(t, "stream_start_card", wire(t, rec.last(t)), *update)
	if err := c.StopStream(t.Context(), sref, connectors.Message{Text: "Load is fine."}); err != nil {
		t.Fatalf("stop stream: %v", err)
	}
}

// controlGoldens: the Stop message the renderer posts below a stream
// with task cards (bot/render/control.go), its status line and Stop,
// and its edit once the answer has ended, without Stop.
func controlGoldens(t *testing.T, c *slack.Connector, rec *formRecorder, dest connectors.Dest) {
	stop := connectors.Button{ActionID: "stop", Value: "slack/C0OPS/" + dest.Thread, Label: "Stop", Style: connectors.StyleDanger}
	ref, err := c.Post(t.Context(), dest, connectors.Message{Context: "running `du -sh /var/log` on web-1…", Buttons: []connectors.Button{stop}})
	if err != nil {
		t.Fatalf("post the Stop message: %v", err)
	}
	connectortest.Golden(t, "control_stop", wire(t, rec.last(t)), *update)
	if err := c.Edit(t.Context(), ref, connectors.Message{Context: "the answer above has ended"}); err != nil {
		t.Fatalf("edit the Stop message: %v", err)
	}
	connectortest.Golden(t, "control_ended", wire(t, rec.last(t)), *update)
}

// The assistant thread calls as Slack receives them: the suggested
// prompts a new thread is answered with, the title its first question
// gives it, and a turn's status. The fake checks each as Slack does (no
// refusal). go test ./connectors/slack -run Golden -update rewrites them.
func TestAssistantThreadGolden(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	rec := &formRecorder{next: fake.Transport()}
	r := startOn(t, fake, slack.Config{}, slack.Options{HTTPClient: &http.Client{Transport: rec}}, true)
	th := fake.StartAssistantThread("D0ALICE", "U04ALICE")
	if !fake.WaitFor(wait, func(s *slackfake.Server) bool { return len(s.AssistantThreads()[0].Prompts) > 0 }) {
		t.Fatal("the assistant thread got no suggested prompts")
	}
	connectortest.Golden(t, "assistant_suggested_prompts", wire(t, rec.lastOf(t, "assistant.threads.setSuggestedPrompts")), *update)
	fake.Reply("D0ALICE", "U04ALICE", th.Thread, "why is the disk on web-1 full? password=hunter22")
	r.next(t)
	if !fake.WaitFor(wait, func(s *slackfake.Server) bool { return s.AssistantThreads()[0].Title != "" }) {
		t.Fatal("the assistant thread got no title")
	}
	connectortest.Golden(t, "assistant_title", wire(t, rec.lastOf(t, "assistant.threads.setTitle")), *update)
	d := connectors.Dest{Platform: slack.Platform, Channel: "D0ALICE", Thread: th.Thread}
	if err := r.conn.Thinking(t.Context(), d, "is thinking…"); err != nil {
		t.Fatalf("thinking: %v", err)
	}
	connectortest.Golden(t, "assistant_status", wire(t, rec.lastOf(t, "assistant.threads.setStatus")), *update)
	for _, code := range []string{"invalid_arguments", "invalid_blocks"} {
		if n := fake.Refusals(code); n != 0 {
			t.Errorf("the fake refused %d assistant calls as %s; want none", n, code)
		}
	}
}
