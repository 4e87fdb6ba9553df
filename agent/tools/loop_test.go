package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/approvals"
)

func TestTodoReminderAfterThreeStepsWithoutUpdate(t *testing.T) {
	t.Parallel()
	h := agent.NewMemoryHistory()
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Calls("", "todo", `{"items":[{"text":"look at disk","status":"in_progress"},{"text":"report","status":"pending"}]}`),
		testfake.Calls("", "echo", `{}`), testfake.Calls("", "echo", `{}`), testfake.Calls("", "echo", `{}`),
		testfake.Text("done"),
	}}
	a := &agent.Agent{Provider: model, Tools: agent.NewRegistry(testfake.Echo(), NewTodo()), History: h}
	if err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "go", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	hasReminder := func(r agent.Request) bool {
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if strings.Contains(b.Text, "todo list has open items") {
					t.Errorf("the reminder is text the person could have written: %s", testfake.JSON(b))
				}
				if b.Type == agent.BlockToolResult && strings.Contains(b.Content, "todo list has open items") {
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
	todo := NewTodo()
	res := todo.Call(context.Background(), agent.ToolCall{Name: "todo", Input: []byte(`{"items":[{"text":"a","status":"in_progress"},{"text":"b","status":"in_progress"}]}`)})
	if !res.IsError || !strings.Contains(res.Content, "only one") {
		t.Errorf("two in progress accepted: %+v", res)
	}
	res = todo.Call(context.Background(), agent.ToolCall{Name: "todo", Session: agent.SessionInfo{ID: 3}, Input: []byte(`{"items":[{"text":"a","status":"done"},{"text":"b","status":"in_progress"}]}`)})
	if res.IsError || !strings.Contains(res.Content, "[x] a") || !strings.Contains(res.Content, "[>] b") || len(todo.Items(3)) != 2 {
		t.Errorf("valid list: %+v", res)
	}
}

func TestSubagentHasFreshHistoryAndNoTaskTool(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Calls("I'll delegate. ", "task", `{"prompt":"count the files in /etc"}`), // parent
		testfake.Calls("sub looking ", "echo", `{"n":1}`),                                 // subagent
		testfake.Text("There are ", "212 files."),                                         // subagent's answer
		testfake.Text("The subagent says 212."),                                           // parent
	}}
	a := &agent.Agent{Provider: model, History: persist.History{Store: st}}
	a.Tools = agent.NewRegistry(testfake.Echo())
	a.Tools.Add(&Task{Parent: a})
	rec := &testfake.Recorder{}
	if err := a.Turn(context.Background(), sess, "how many files in /etc?", rec.Emit); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	sub := reqs[1]
	if len(sub.Messages) != 1 || textOf(sub.Messages[0]) != "count the files in /etc" {
		t.Errorf("the subagent saw the parent's history: %s", testfake.JSON(sub.Messages))
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
	if strings.Contains(rec.Text(), "sub looking") {
		t.Error("the subagent's text leaked into the parent's answer")
	}
	if n := len(testfake.Load(t, persist.History{Store: st}, sess.ID)); n != 4 {
		t.Errorf("parent history has %d messages; want 4", n)
	}
}

func TestSkillScriptApprovalShowsItsStdin(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "db", "Runs SQL.", map[string]string{"sql.sh": "#!/bin/sh\ncat\n"})
	skills, _ := agent.LoadSkills([]string{root})
	ap := &fakeApprover{answer: approvals.Outcome{State: "denied"}}
	tool := &RunSkillScript{Skills: skills, Guard: &approvals.Guard{Policy: fakePolicy{}, Approver: ap, Exec: &shellExec{}}}
	tool.Call(context.Background(), agent.ToolCall{Name: "run_skill_script", Emit: func(agent.Event) {},
		Input: []byte(`{"skill":"db","script":"sql.sh","stdin":"DROP TABLE users;"}`)})
	if len(ap.request) != 1 || !strings.Contains(ap.request[0].Command, "<<< 'DROP TABLE users;'") {
		t.Errorf("the approval does not show the stdin: %+v", ap.request)
	}
}
