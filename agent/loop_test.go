package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

func TestTurnDispatchesToolsAndPersistsEachStep(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		use("Let me check. ", "echo", `{"x":1}`, "echo", `{"x":2}`),
		say("Both ", "echoed."),
	}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool()), History: StoreHistory{st}}
	rec := &recorder{}
	if err := a.Turn(context.Background(), sess, "check twice", rec.emit); err != nil {
		t.Fatal(err)
	}
	if got := rec.text(); got != "Let me check. \n\nBoth echoed." {
		t.Errorf("streamed text = %q", got)
	}
	if n := len(rec.kinds(ToolStarted)); n != 2 {
		t.Errorf("%d tool started events; want 2", n)
	}
	if done := rec.kinds(TurnDone); len(done) != 1 || done[0].Usage.OutputTokens != 5 {
		t.Errorf("TurnDone = %+v", done)
	}
	msgs := mustLoad(t, StoreHistory{st}, sess.ID)
	roles := ""
	for _, m := range msgs {
		roles += string(m.Role[0])
	}
	if roles != "uaua" {
		t.Fatalf("history roles = %s; want uaua (question, tool calls, results, answer): %s", roles, toJSON(msgs))
	}
	results := msgs[2].Content
	if len(results) != 2 || results[0].Content != `echo:{"x":1}` || results[1].ToolUseID != msgs[1].Content[2].ID {
		t.Errorf("tool results = %s", toJSON(results))
	}
	// The model's second call carried the results and the tool list.
	reqs := model.reqs()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 || reqs[1].Tools[0].Name != "echo" {
		t.Errorf("second request = %s", toJSON(reqs[1]))
	}
}

func TestUnknownToolIsAResultTheModelReads(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		use("", "rm_everything", `{}`),
		say("Sorry."),
	}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool()), History: StoreHistory{st}}
	if err := a.Turn(context.Background(), sess, "go", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	res := model.reqs()[1].Messages[2].Content[0]
	if !res.IsError || !strings.Contains(res.Content, `unknown tool "rm_everything"`) || !strings.Contains(res.Content, "echo") {
		t.Errorf("result = %+v", res)
	}
}

func TestMaxStepsEndsTheTurnWithValidHistory(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	loop := use("", "echo", `{}`)
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){loop, loop, loop, loop}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool()), History: StoreHistory{st}, MaxSteps: 3}
	rec := &recorder{}
	err := a.Turn(context.Background(), sess, "loop", rec.emit)
	if !errors.Is(err, ErrMaxSteps) || len(model.reqs()) != 3 {
		t.Fatalf("err = %v after %d calls; want ErrMaxSteps after 3", err, len(model.reqs()))
	}
	if len(pendingToolCalls(mustLoad(t, StoreHistory{st}, sess.ID))) != 0 {
		t.Error("history ends with unanswered tool calls")
	}
	if len(rec.kinds(TurnError)) != 1 {
		t.Error("no TurnError event")
	}
}

func TestDeadlineEndsABlockedTool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := NewMemoryHistory()
		block := funcTool{"wait", func(ctx context.Context, _ ToolCall) ToolResult {
			<-ctx.Done()
			return Errorf("cancelled")
		}}
		model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){use("", "wait", `{}`)}}
		a := &Agent{Provider: model, Tools: NewRegistry(block), History: h, TurnTimeout: 10 * time.Minute}
		start := time.Now()
		err := a.Turn(context.Background(), SessionInfo{ID: 1}, "wait forever", (&recorder{}).emit)
		if !errors.Is(err, ErrDeadline) {
			t.Fatalf("err = %v; want ErrDeadline", err)
		}
		if d := time.Since(start); d != 10*time.Minute {
			t.Errorf("turn ended after %v; want exactly the 10m deadline", d)
		}
		msgs := mustLoad(t, h, 1)
		last := msgs[len(msgs)-1]
		if last.Role != RoleUser || !strings.Contains(last.Content[0].Content, "time limit") {
			t.Errorf("the pending call was not settled: %s", toJSON(last))
		}
	})
}

func TestCancelRollsBackExactly(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"mid-stream", "mid-tool"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			st, sess := testStore(t)
			h := StoreHistory{st}
			// An earlier turn that must survive.
			prior := &Agent{Provider: &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){say("hello")}}, Tools: NewRegistry(), History: h}
			prior.Turn(context.Background(), sess, "hi", (&recorder{}).emit)
			before := toJSON(mustLoad(t, h, sess.ID))

			block := funcTool{"wait", func(ctx context.Context, _ ToolCall) ToolResult { <-ctx.Done(); return Errorf("x") }}
			blockStream := func(ctx context.Context, _ Request, yield func(StreamEvent) bool) {
				yield(StreamEvent{Kind: EventText, Text: "thinking…"})
				<-ctx.Done()
				yield(StreamEvent{Kind: EventError, Err: ctx.Err()})
			}
			steps := []func(context.Context, Request, func(StreamEvent) bool){blockStream}
			trigger := TextDelta
			if where == "mid-tool" {
				steps = []func(context.Context, Request, func(StreamEvent) bool){use("ok ", "wait", `{}`)}
				trigger = ToolStarted
			}
			a := &Agent{Provider: &scripted{steps: steps}, Tools: NewRegistry(block), History: h}
			ctx, cancel := context.WithCancel(context.Background())
			rec := &recorder{on: func(ev Event) {
				if ev.Kind == trigger {
					cancel()
				}
			}}
			err := a.Turn(ctx, sess, "do something long", rec.emit)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v; want context.Canceled", err)
			}
			if after := toJSON(mustLoad(t, h, sess.ID)); after != before {
				t.Errorf("history after cancel:\n%s\nwant as before the turn:\n%s", after, before)
			}
		})
	}
}

func TestResumeAfterRestartRunsThePendingCall(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	h := StoreHistory{st}
	ctx := context.Background()
	// A previous process stored the question and the model's tool call,
	// then died before the tool's result was recorded.
	h.Append(ctx, sess.ID, userText("restart nginx"),
		Message{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: "toolu_1", Name: "echo", Input: []byte(`{"cmd":"restart"}`)}}})

	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){say("Restarted.")}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool()), History: h}
	rec := &recorder{}
	resumed, err := a.Resume(ctx, sess, rec.emit)
	if err != nil || !resumed {
		t.Fatalf("Resume = %v, %v", resumed, err)
	}
	reqs := model.reqs()
	if len(reqs) != 1 || reqs[0].Messages[2].Content[0].ToolUseID != "toolu_1" || reqs[0].Messages[2].Content[0].Content != `echo:{"cmd":"restart"}` {
		t.Fatalf("the model did not get the pending call's result: %s", toJSON(reqs))
	}
	if rec.text() != "Restarted." {
		t.Errorf("text = %q", rec.text())
	}
	if again, _ := a.Resume(ctx, sess, rec.emit); again {
		t.Error("a finished turn resumed again")
	}
}

func TestReadResultsAreShortenedOnlyOverBudget(t *testing.T) {
	t.Parallel()
	big := func(i int) string {
		return fmt.Sprintf("HEAD%d\n%sTAIL%d", i, strings.Repeat("x", 6000), i)
	}
	var history []Message
	history = append(history, userText("go"))
	for i := range 5 {
		id := fmt.Sprintf("c%d", i)
		history = append(history,
			Message{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: id, Name: "run_command", Input: []byte(`{}`)}}},
			Message{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ToolUseID: id, Content: big(i)}}})
	}
	whole := func(msgs []Message) (n int, shortened []int) {
		i := 0
		for _, m := range msgs {
			for _, b := range m.Content {
				if b.Type != BlockToolResult {
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
	if n, _ := whole(prepare(history, 50_000)); n != 5 {
		t.Errorf("under budget: %d of 5 results whole; want all", n)
	}
	// Over budget: the oldest read results go first; the last one, which
	// this request delivers, stays whole whatever the budget.
	if n, cut := whole(prepare(history, 1000)); n != 1 || fmt.Sprint(cut) != "[0 1 2 3]" {
		t.Errorf("over budget: %d whole, shortened %v; want the unread one whole and 0-3 shortened", n, cut)
	}
	if n, cut := whole(prepare(history, 6500)); fmt.Sprint(cut) != "[0]" || n != 4 {
		t.Errorf("a little over budget: shortened %v, %d whole; want the oldest first", cut, n)
	}
	if strings.Contains(toJSON(history), "cleared") {
		t.Fatal("the stored history was changed")
	}
}

func TestTodoReminderAfterThreeStepsWithoutUpdate(t *testing.T) {
	t.Parallel()
	h := NewMemoryHistory()
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		use("", "todo", `{"items":[{"text":"look at disk","status":"in_progress"},{"text":"report","status":"pending"}]}`),
		use("", "echo", `{}`), use("", "echo", `{}`), use("", "echo", `{}`),
		say("done"),
	}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool(), NewTodoTool()), History: h}
	if err := a.Turn(context.Background(), SessionInfo{ID: 1}, "go", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	reqs := model.reqs()
	hasReminder := func(r Request) bool {
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if strings.Contains(b.Text, "todo list has open items") {
					t.Errorf("the reminder is text the person could have written: %s", toJSON(b))
				}
				if b.Type == BlockToolResult && strings.Contains(b.Content, "todo list has open items") {
					return true
				}
			}
		}
		return false
	}
	for i, r := range reqs {
		if want := i == 4; hasReminder(r) != want {
			t.Errorf("request %d has reminder = %v; want %v", i, hasReminder(r), want)
		}
	}
}

func TestTodoAllowsOneItemInProgress(t *testing.T) {
	t.Parallel()
	todo := NewTodoTool()
	res := todo.Call(context.Background(), ToolCall{Name: "todo", Input: []byte(`{"items":[{"text":"a","status":"in_progress"},{"text":"b","status":"in_progress"}]}`)})
	if !res.IsError || !strings.Contains(res.Content, "only one") {
		t.Errorf("two in progress accepted: %+v", res)
	}
	res = todo.Call(context.Background(), ToolCall{Name: "todo", Session: SessionInfo{ID: 3}, Input: []byte(`{"items":[{"text":"a","status":"done"},{"text":"b","status":"in_progress"}]}`)})
	if res.IsError || !strings.Contains(res.Content, "[x] a") || !strings.Contains(res.Content, "[>] b") || len(todo.Items(3)) != 2 {
		t.Errorf("valid list: %+v", res)
	}
}

func TestSubagentHasFreshHistoryAndNoTaskTool(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		use("I'll delegate. ", "task", `{"prompt":"count the files in /etc"}`), // parent
		use("sub looking ", "echo", `{"n":1}`),                                 // subagent
		say("There are ", "212 files."),                                        // subagent's answer
		say("The subagent says 212."),                                          // parent
	}}
	a := &Agent{Provider: model, History: StoreHistory{st}}
	a.Tools = NewRegistry(echoTool())
	a.Tools.Add(&TaskTool{Parent: a})
	rec := &recorder{}
	if err := a.Turn(context.Background(), sess, "how many files in /etc?", rec.emit); err != nil {
		t.Fatal(err)
	}
	reqs := model.reqs()
	sub := reqs[1]
	if len(sub.Messages) != 1 || textOf(sub.Messages[0]) != "count the files in /etc" {
		t.Errorf("the subagent saw the parent's history: %s", toJSON(sub.Messages))
	}
	for _, tool := range sub.Tools {
		if tool.Name == "task" {
			t.Error("the subagent can spawn subagents")
		}
	}
	parentResult := reqs[3].Messages[2].Content[0]
	if parentResult.Content != "There are 212 files." {
		t.Errorf("parent got %q; want only the subagent's final text", parentResult.Content)
	}
	if strings.Contains(rec.text(), "sub looking") {
		t.Error("the subagent's text leaked into the parent's answer")
	}
	if n := len(mustLoad(t, StoreHistory{st}, sess.ID)); n != 4 {
		t.Errorf("parent history has %d messages; want 4", n)
	}
}

func TestAutoCompactionSummarizesAndArchives(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	h := StoreHistory{st}
	ctx := context.Background()
	h.Append(ctx, sess.ID, userText(strings.Repeat("old question ", 200)), Message{Role: RoleAssistant, Content: []Block{{Type: BlockText, Text: "old answer"}}})
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		say("SUMMARY: disk on web-1 was 91%."), // the compaction call
		say("Still 91%."),
	}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool()), History: h, CompactAt: 200}
	rec := &recorder{}
	if err := a.Turn(ctx, sess, "and now?", rec.emit); err != nil {
		t.Fatal(err)
	}
	reqs := model.reqs()
	if reqs[0].System != summaryPrompt || len(reqs[0].Tools) == 0 {
		t.Errorf("first call was not a summary request: %s", toJSON(reqs[0]))
	}
	msgs := mustLoad(t, h, sess.ID)
	if len(msgs) != 3 || !strings.Contains(textOf(msgs[0]), "SUMMARY: disk") || textOf(msgs[1]) != "and now?" {
		t.Fatalf("history after compaction = %s", toJSON(msgs))
	}
	tr, _ := st.Sessions().Transcripts(ctx, sess.ID)
	if len(tr) != 1 || len(tr[0].Messages) != 3 {
		t.Errorf("transcript not archived: %+v", tr)
	}
	if len(rec.kinds(Notice)) == 0 {
		t.Error("no notice of the compaction")
	}
}

func TestCompactToolCompactsOnRequest(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	h := StoreHistory{st}
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		use("", "echo", `{}`),
		say("Echoed."),
		use("", "compact", `{}`),
		say("SUMMARY: echoed once."),
		say("Done."),
	}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool(), NewCompactTool()), History: h}
	for _, q := range []string{"echo", "go on"} {
		if err := a.Turn(context.Background(), sess, q, (&recorder{}).emit); err != nil {
			t.Fatal(err)
		}
	}
	reqs := model.reqs()
	if reqs[3].System != summaryPrompt || len(reqs[3].Tools) == 0 {
		t.Fatalf("the compact tool did not lead to a summary call with the tools listed: %s", toJSON(reqs[3]))
	}
	// The summary, then the current turn as it was: its question, the
	// compact call and its result.
	next := reqs[4].Messages
	if len(next) != 3 || !strings.Contains(textOf(next[0]), "SUMMARY: echoed once.") || !strings.Contains(toJSON(next[0]), "go on") {
		t.Errorf("the next call did not continue from the summary and the current turn: %s", toJSON(next))
	}
	if tr, _ := st.Sessions().Transcripts(context.Background(), sess.ID); len(tr) != 1 {
		t.Error("no transcript archived")
	}
}

func TestProviderErrorKeepsPartialText(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){
		func(_ context.Context, _ Request, yield func(StreamEvent) bool) {
			yield(StreamEvent{Kind: EventText, Text: "The disk is"})
			yield(StreamEvent{Kind: EventError, Err: errors.New("connection reset")})
		},
	}}
	a := &Agent{Provider: model, Tools: NewRegistry(), History: StoreHistory{st}}
	rec := &recorder{}
	if err := a.Turn(context.Background(), sess, "disk?", rec.emit); err == nil {
		t.Fatal("no error")
	}
	msgs := mustLoad(t, StoreHistory{st}, sess.ID)
	if len(msgs) != 2 || textOf(msgs[1]) != "The disk is" {
		t.Errorf("partial answer not kept: %s", toJSON(msgs))
	}
	if errs := rec.kinds(TurnError); len(errs) != 1 || !strings.Contains(errs[0].Err.Error(), "connection reset") {
		t.Errorf("TurnError = %+v", errs)
	}
}

func TestANewMessageSettlesCallsACrashLeftUnanswered(t *testing.T) {
	t.Parallel()
	st, sess := testStore(t)
	h := StoreHistory{st}
	ctx := context.Background()
	h.Append(ctx, sess.ID, userText("restart nginx"),
		Message{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: "toolu_1", Name: "echo", Input: []byte(`{}`)}}})
	model := &scripted{steps: []func(context.Context, Request, func(StreamEvent) bool){say("OK.")}}
	a := &Agent{Provider: model, Tools: NewRegistry(echoTool()), History: h}
	if err := a.Turn(ctx, sess, "never mind, how is the disk?", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	msgs := model.reqs()[0].Messages
	// question, call, its (settled) result + the new question merged, …
	// The call may have been running when the process died: the model is
	// told it may have partly run, never that it did not run.
	if len(msgs) != 3 || msgs[2].Content[0].Type != BlockToolResult || !strings.Contains(msgs[2].Content[0].Content, "may have partly run") ||
		strings.HasPrefix(msgs[2].Content[0].Content, "not run") {
		t.Fatalf("request = %s", toJSON(msgs))
	}
}

func TestSkillScriptApprovalShowsItsStdin(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "db", "Runs SQL.", map[string]string{"sql.sh": "#!/bin/sh\ncat\n"})
	skills, _ := LoadSkills([]string{root})
	ap := &fakeApprover{answer: approvals.Outcome{State: "denied"}}
	tool := &RunSkillScriptTool{Skills: skills, Guard: &approvals.Guard{Policy: fakePolicy{}, Approver: ap, Exec: &shellExec{}}}
	tool.Call(context.Background(), ToolCall{Name: "run_skill_script", Emit: func(Event) {},
		Input: []byte(`{"skill":"db","script":"sql.sh","stdin":"DROP TABLE users;"}`)})
	if len(ap.request) != 1 || !strings.Contains(ap.request[0].Command, "<<< 'DROP TABLE users;'") {
		t.Errorf("the approval does not show the stdin: %+v", ap.request)
	}
}

// A loaded skill's body is a runbook being followed: it is never
// shortened, however far over budget the call is.
func TestLoadedSkillIsNeverShortened(t *testing.T) {
	t.Parallel()
	body := "STEP 1\n" + strings.Repeat("do this carefully\n", 500) + "STEP 9"
	history := []Message{userText("follow the runbook"),
		{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: "s1", Name: "load_skill", Input: []byte(`{}`)}}},
		{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ToolUseID: "s1", Content: body}}},
	}
	for _, id := range []string{"c1", "c2", "c3"} { // three more commands, as the runbook says
		history = append(history,
			Message{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: id, Name: "run_command", Input: []byte(`{}`)}}},
			Message{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ToolUseID: id, Content: strings.Repeat("output\n", 300)}}})
	}
	if got := prepare(history, 100)[2].Content[0].Content; got != body {
		t.Errorf("the skill's body was shortened to %d bytes", len(got))
	}
}
