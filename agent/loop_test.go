package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/persist"
)

func TestTurnDispatchesToolsAndPersistsEachStep(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Calls("Let me check. ", "echo", `{"x":1}`, "echo", `{"x":2}`),
		testfake.Text("Both ", "echoed."),
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: persist.History{Store: st}}
	rec := &testfake.Recorder{}
	if err := a.Turn(context.Background(), sess, "check twice", rec.Emit); err != nil {
		t.Fatal(err)
	}
	if got := rec.Text(); got != "Let me check. \n\nBoth echoed." {
		t.Errorf("streamed text = %q", got)
	}
	if n := len(rec.Kinds(agent.ToolStarted)); n != 2 {
		t.Errorf("%d tool started events; want 2", n)
	}
	if done := rec.Kinds(agent.TurnDone); len(done) != 1 || done[0].Usage.OutputTokens != 5 {
		t.Errorf("TurnDone = %+v", done)
	}
	msgs := testfake.Load(t, persist.History{Store: st}, sess.ID)
	roles := ""
	for _, m := range msgs {
		roles += string(m.Role[0])
	}
	if roles != "uaua" {
		t.Fatalf("history roles = %s; want uaua (question, tool calls, results, answer): %s", roles, testfake.JSON(msgs))
	}
	results := msgs[2].Content
	if len(results) != 2 || results[0].Content != `echo:{"x":1}` || results[1].ToolUseID != msgs[1].Content[2].ID {
		t.Errorf("tool results = %s", testfake.JSON(results))
	}
	// The model's second call carried the results and the tool list.
	reqs := model.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 || reqs[1].Tools[0].Name != "echo" {
		t.Errorf("second request = %s", testfake.JSON(reqs[1]))
	}
}

func TestUnknownToolIsAResultTheModelReads(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Calls("", "rm_everything", `{}`),
		testfake.Text("Sorry."),
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: persist.History{Store: st}}
	if err := a.Turn(context.Background(), sess, "go", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	res := model.Requests()[1].Messages[2].Content[0]
	if !res.IsError || !strings.Contains(res.Content, `unknown tool "rm_everything"`) || !strings.Contains(res.Content, "echo") {
		t.Errorf("result = %+v", res)
	}
}

func TestMaxStepsEndsTheTurnWithValidHistory(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	loop := testfake.Calls("", "echo", `{}`)
	model := &testfake.Model{Steps: []testfake.Step{loop, loop, loop, loop}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: persist.History{Store: st}, MaxSteps: 3}
	rec := &testfake.Recorder{}
	err := a.Turn(context.Background(), sess, "loop", rec.Emit)
	if !errors.Is(err, agent.ErrMaxSteps) || len(model.Requests()) != 3 {
		t.Fatalf("err = %v after %d calls; want ErrMaxSteps after 3", err, len(model.Requests()))
	}
	if len(agent.PendingToolCalls(testfake.Load(t, persist.History{Store: st}, sess.ID))) != 0 {
		t.Error("history ends with unanswered tool calls")
	}
	if len(rec.Kinds(agent.TurnError)) != 1 {
		t.Error("no TurnError event")
	}
	// The model called tools on its last step: opsbot says what ran.
	if !strings.Contains(rec.Text(), "The model gave no answer; this is what ran:\n- `echo {}`") {
		t.Errorf("the turn ended without saying what ran: %q", rec.Text())
	}
}

// A model that cannot answer after the deadline (it calls a tool all the
// same) still leaves an answer: opsbot's list of what ran, and a history
// with no call left unanswered.
func TestDeadlineWithoutAnAnswerSaysWhatRan(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := agent.NewMemoryHistory()
		block := testfake.Tool{Name: "wait", Fn: func(ctx context.Context, _ agent.ToolCall) agent.ToolResult {
			<-ctx.Done()
			return agent.Errorf("cancelled")
		}}
		model := &testfake.Model{Steps: []testfake.Step{testfake.Calls("Checking.", "wait", `{"for":"ever"}`), testfake.Calls("", "wait", `{}`)}}
		a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(block), History: h, TurnTimeout: time.Minute}
		rec := &testfake.Recorder{}
		if err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "wait", rec.Emit); !errors.Is(err, agent.ErrDeadline) {
			t.Fatalf("err = %v; want ErrDeadline", err)
		}
		want := "Checking.\n\nThe model gave no answer; this is what ran:\n- `wait {\"for\":\"ever\"}`: interrupted: the turn reached its time limit"
		if !strings.HasPrefix(rec.Text(), want) {
			t.Errorf("answer %q\nwant %q", rec.Text(), want)
		}
		if calls := agent.PendingToolCalls(testfake.Load(t, h, 1)); len(calls) != 0 {
			t.Errorf("history ends with unanswered calls: %v", calls)
		}
	})
}

func TestDeadlineEndsABlockedTool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := agent.NewMemoryHistory()
		block := testfake.Tool{Name: "wait", Fn: func(ctx context.Context, _ agent.ToolCall) agent.ToolResult {
			<-ctx.Done()
			return agent.Errorf("cancelled")
		}}
		model := &testfake.Model{Steps: []testfake.Step{testfake.Calls("", "wait", `{}`), testfake.Text("The wait never ended; nothing else is known.")}}
		a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(block), History: h, TurnTimeout: 10 * time.Minute}
		start := time.Now()
		rec := &testfake.Recorder{}
		err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "wait forever", rec.Emit)
		if !errors.Is(err, agent.ErrDeadline) {
			t.Fatalf("err = %v; want ErrDeadline", err)
		}
		if d := time.Since(start); d != 10*time.Minute {
			t.Errorf("turn ended after %v; want exactly the 10m deadline", d)
		}
		msgs := testfake.Load(t, h, 1)
		settled := msgs[len(msgs)-2]
		if settled.Role != agent.RoleUser || !strings.Contains(settled.Content[0].Content, "time limit") {
			t.Errorf("the pending call was not settled: %s", testfake.JSON(settled))
		}
		// Every end gives an answer: one last call without tools.
		reqs := model.Requests()
		if last := reqs[len(reqs)-1]; !last.NoToolUse || !strings.Contains(testfake.JSON(last.Messages), "reached its time limit") {
			t.Errorf("the last call may use tools or does not say the time is up: %s", testfake.JSON(last))
		}
		if !strings.Contains(rec.Text(), "The wait never ended") {
			t.Errorf("the answer after the deadline was not shown: %q", rec.Text())
		}
	})
}

// A cancel ends the turn and keeps what it did: the question, the text
// shown, each call with how far it got; the history stays valid for the
// next turn.
func TestCancelKeepsAValidHistory(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"mid-stream", "mid-tool"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			st, sess := testfake.Store(t)
			h := persist.History{Store: st}
			block := testfake.Tool{Name: "wait", Fn: func(ctx context.Context, _ agent.ToolCall) agent.ToolResult { <-ctx.Done(); return agent.Errorf("x") }}
			blockStream := func(ctx context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
				yield(agent.StreamEvent{Kind: agent.EventText, Text: "thinking…"})
				<-ctx.Done()
				yield(agent.StreamEvent{Kind: agent.EventError, Err: ctx.Err()})
			}
			steps := []testfake.Step{blockStream, testfake.Text("next")}
			trigger, want := agent.TextDelta, `"thinking…"`
			if where == "mid-tool" {
				steps = []testfake.Step{testfake.Calls("ok ", "wait", `{}`), testfake.Text("next")}
				trigger, want = agent.ToolStarted, "interrupted: the person stopped the turn"
			}
			a := &agent.Agent{Provider: &testfake.Model{Steps: steps}, Tools: agent.NewRegistry(block), History: h}
			ctx, cancel := context.WithCancel(context.Background())
			rec := &testfake.Recorder{On: func(ev agent.Event) {
				if ev.Kind == trigger {
					cancel()
				}
			}}
			err := a.Turn(ctx, sess, "do something long", rec.Emit)
			if !errors.Is(err, context.Canceled) || !errors.Is(err, agent.ErrStopped) {
				t.Fatalf("err = %v; want ErrStopped and context.Canceled", err)
			}
			after := testfake.JSON(testfake.Load(t, h, sess.ID))
			if !strings.Contains(after, "do something long") || !strings.Contains(after, want) {
				t.Errorf("history after cancel:\n%s\nwant the question and %s", after, want)
			}
			if err := a.Turn(context.Background(), sess, "and now?", (&testfake.Recorder{}).Emit); err != nil {
				t.Errorf("the next turn failed: %v", err)
			}
		})
	}
}

func TestResumeAfterRestartRunsThePendingCall(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	h := persist.History{Store: st}
	ctx := context.Background()
	// A previous process stored the question and the model's tool call,
	// then died before the tool's result was recorded.
	h.Append(ctx, sess.ID, agent.UserText("restart nginx"),
		agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockToolUse, ID: "toolu_1", Name: "echo", Input: []byte(`{"cmd":"restart"}`)}}})

	model := &testfake.Model{Steps: []testfake.Step{testfake.Text("Restarted.")}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: h}
	rec := &testfake.Recorder{}
	resumed, err := a.Resume(ctx, sess, rec.Emit)
	if err != nil || !resumed {
		t.Fatalf("Resume = %v, %v", resumed, err)
	}
	reqs := model.Requests()
	if len(reqs) != 1 || reqs[0].Messages[2].Content[0].ToolUseID != "toolu_1" || reqs[0].Messages[2].Content[0].Content != `echo:{"cmd":"restart"}` {
		t.Fatalf("the model did not get the pending call's result: %s", testfake.JSON(reqs))
	}
	if rec.Text() != "Restarted." {
		t.Errorf("text = %q", rec.Text())
	}
	if again, _ := a.Resume(ctx, sess, rec.Emit); again {
		t.Error("a finished turn resumed again")
	}
}

func TestReadResultsAreShortenedOnlyOverBudget(t *testing.T) {
	t.Parallel()
	big := func(i int) string {
		return fmt.Sprintf("HEAD%d\n%sTAIL%d", i, strings.Repeat("x", 6000), i)
	}
	var history []agent.Message
	history = append(history, agent.UserText("go"))
	for i := range 5 {
		id := fmt.Sprintf("c%d", i)
		history = append(history,
			agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockToolUse, ID: id, Name: "run_command", Input: []byte(`{}`)}}},
			agent.Message{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockToolResult, ToolUseID: id, Content: big(i)}}})
	}
	whole := func(msgs []agent.Message) (n int, shortened []int) {
		i := 0
		for _, m := range msgs {
			for _, b := range m.Content {
				if b.Type != agent.BlockToolResult {
					continue
				}
				if strings.Contains(b.Content, "cleared to save context") {
					if !strings.HasPrefix(b.Content, fmt.Sprintf("HEAD%d", i)) || !strings.HasSuffix(b.Content, fmt.Sprintf("TAIL%d", i)) {
						t.Errorf("result %d lost its head or tail: %.80q", i, b.Content)
					}
					shortened = append(shortened, i)
				} else {
					n++
				}
				i++
			}
		}
		return n, shortened
	}
	if n, _ := whole(agent.Prepare(history, 50_000)); n != 5 {
		t.Errorf("under budget: %d of 5 results whole; want all", n)
	}
	// Over budget: the oldest read results go first; the last one, which
	// this request delivers, stays whole whatever the budget.
	if n, cut := whole(agent.Prepare(history, 1000)); n != 1 || fmt.Sprint(cut) != "[0 1 2 3]" {
		t.Errorf("over budget: %d whole, shortened %v; want the unread one whole and 0-3 shortened", n, cut)
	}
	// A little over budget: cut in bulk, oldest first, by half the budget
	// at least, so that the next steps find the same prefix.
	if n, cut := whole(agent.Prepare(history, 6500)); fmt.Sprint(cut) != "[0 1 2]" || n != 2 {
		t.Errorf("a little over budget: shortened %v, %d whole; want the oldest first, half the budget at least", cut, n)
	}
	if strings.Contains(testfake.JSON(history), "cleared") {
		t.Fatal("the stored history was changed")
	}
}

func TestAutoCompactionSummarizesAndArchives(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	h := persist.History{Store: st}
	ctx := context.Background()
	h.Append(ctx, sess.ID, agent.UserText(strings.Repeat("old question ", 200)), agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockText, Text: "old answer"}}})
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Text("SUMMARY: disk on web-1 was 91% (45G of 50G on /); the old question was asked 200 times and answered once, " +
			"with no command run and nothing changed; left to check: what grows on /, and whether the 91% still holds now."), // the compaction call
		testfake.Text("Still 91%."),
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: h, CompactAt: 200}
	rec := &testfake.Recorder{}
	if err := a.Turn(ctx, sess, "and now?", rec.Emit); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if reqs[0].System != agent.SummaryPrompt || len(reqs[0].Tools) != 0 {
		t.Errorf("first call was not a summary request: %s", testfake.JSON(reqs[0]))
	}
	msgs := testfake.Load(t, h, sess.ID)
	if len(msgs) != 3 || !strings.Contains(agent.TextOf(msgs[0]), "SUMMARY: disk") || agent.TextOf(msgs[1]) != "and now?" {
		t.Fatalf("history after compaction = %s", testfake.JSON(msgs))
	}
	tr, _ := st.Sessions().Transcripts(ctx, sess.ID)
	if len(tr) != 1 || len(tr[0].Messages) != 3 {
		t.Errorf("transcript not archived: %+v", tr)
	}
	if len(rec.Kinds(agent.Notice)) == 0 {
		t.Error("no notice of the compaction")
	}
}

func TestCompactToolCompactsOnRequest(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	h := persist.History{Store: st}
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Calls("", "echo", `{}`),
		testfake.Text("Echoed."),
		testfake.Calls("", "compact", `{}`),
		testfake.Text("SUMMARY: echoed once."),
		testfake.Text("Done."),
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo(), agent.NewCompactTool()), History: h}
	for _, q := range []string{"echo", "go on"} {
		if err := a.Turn(context.Background(), sess, q, (&testfake.Recorder{}).Emit); err != nil {
			t.Fatal(err)
		}
	}
	reqs := model.Requests()
	if reqs[3].System != agent.SummaryPrompt || len(reqs[3].Tools) != 0 {
		t.Fatalf("the compact tool did not lead to a summary call without tools: %s", testfake.JSON(reqs[3]))
	}
	// The summary, then the current turn as it was: its question, the
	// compact call and its result.
	next := reqs[4].Messages
	if len(next) != 3 || !strings.Contains(agent.TextOf(next[0]), "SUMMARY: echoed once.") || !strings.Contains(testfake.JSON(next[0]), "go on") {
		t.Errorf("the next call did not continue from the summary and the current turn: %s", testfake.JSON(next))
	}
	if tr, _ := st.Sessions().Transcripts(context.Background(), sess.ID); len(tr) != 1 {
		t.Error("no transcript archived")
	}
}

func TestProviderErrorKeepsPartialText(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	model := &testfake.Model{Steps: []testfake.Step{
		func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
			yield(agent.StreamEvent{Kind: agent.EventText, Text: "The disk is"})
			yield(agent.StreamEvent{Kind: agent.EventError, Err: errors.New("connection reset")})
		},
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(), History: persist.History{Store: st}}
	rec := &testfake.Recorder{}
	if err := a.Turn(context.Background(), sess, "disk?", rec.Emit); err == nil {
		t.Fatal("no error")
	}
	msgs := testfake.Load(t, persist.History{Store: st}, sess.ID)
	if len(msgs) != 2 || agent.TextOf(msgs[1]) != "The disk is" {
		t.Errorf("partial answer not kept: %s", testfake.JSON(msgs))
	}
	if errs := rec.Kinds(agent.TurnError); len(errs) != 1 || !strings.Contains(errs[0].Err.Error(), "connection reset") {
		t.Errorf("TurnError = %+v", errs)
	}
}

func TestANewMessageSettlesCallsACrashLeftUnanswered(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	h := persist.History{Store: st}
	ctx := context.Background()
	h.Append(ctx, sess.ID, agent.UserText("restart nginx"),
		agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockToolUse, ID: "toolu_1", Name: "echo", Input: []byte(`{}`)}}})
	model := &testfake.Model{Steps: []testfake.Step{testfake.Text("OK.")}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo()), History: h}
	if err := a.Turn(ctx, sess, "never mind, how is the disk?", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	msgs := model.Requests()[0].Messages
	// question, call, its (settled) result + the new question merged, …
	// The call may have been running when the process died: the model is
	// told it may have partly run, never that it did not run.
	if len(msgs) != 3 || msgs[2].Content[0].Type != agent.BlockToolResult || !strings.Contains(msgs[2].Content[0].Content, "may have partly run") ||
		strings.HasPrefix(msgs[2].Content[0].Content, "not run") {
		t.Fatalf("request = %s", testfake.JSON(msgs))
	}
}

// A loaded skill's body is a runbook being followed: it is never
// shortened, however far over budget the call is.
func TestLoadedSkillIsNeverShortened(t *testing.T) {
	t.Parallel()
	body := "STEP 1\n" + strings.Repeat("do this carefully\n", 500) + "STEP 9"
	history := []agent.Message{agent.UserText("follow the runbook"),
		{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockToolUse, ID: "s1", Name: "load_skill", Input: []byte(`{}`)}}},
		{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockToolResult, ToolUseID: "s1", Content: body}}},
	}
	for _, id := range []string{"c1", "c2", "c3"} { // three more commands, as the runbook says
		history = append(history,
			agent.Message{Role: agent.RoleAssistant, Content: []agent.Block{{Type: agent.BlockToolUse, ID: id, Name: "run_command", Input: []byte(`{}`)}}},
			agent.Message{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockToolResult, ToolUseID: id, Content: strings.Repeat("output\n", 300)}}})
	}
	if got := agent.Prepare(history, 100)[2].Content[0].Content; got != body {
		t.Errorf("the skill's body was shortened to %d bytes", len(got))
	}
}
