package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/checks"
)

// fakeHealth is one schedule, "nightly", whose run reports no results.
type fakeHealth struct{ ran chan string }

func (f fakeHealth) Names() []string { return []string{"nightly"} }
func (f fakeHealth) Schedule(name string) (checks.Schedule, bool) {
	return checks.Schedule{Name: name, Cron: "@daily", Checks: []string{"disk"}}, name == "nightly"
}
func (f fakeHealth) Next(string) time.Time { return time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC) }
func (f fakeHealth) Latest(context.Context, string) (checks.Report, error) {
	return checks.Report{}, checks.ErrNoRuns
}
func (f fakeHealth) RunNow(_ context.Context, name string) (checks.Report, error) {
	f.ran <- name
	return checks.Report{Schedule: name, At: time.Now(), Checks: []string{"disk"}}, nil
}

// Every chat command answers without the model, in words a person reads:
// what it did, or how to use it.
func TestChatCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	steps := []struct{ say, want string }{
		{"help", "run <target> <command>"},
		{"", "run <target> <command>"},
		{"hosts", "`local`"},
		{"jobs", "No background jobs in this thread."},
		{"job seven", "Usage: `job <id>`"},
		{"job 999", "This thread has no job 999"},
		{"cancel seven", "Usage: `cancel` stops the running answer"},
		{"cancel 999", "This thread has no job 999"},
		{"run", "Usage: `run [--timeout 5m]"},
		{"run --timeout soon local uptime", "`--timeout` wants a duration"},
		{"run --fast local uptime", "`run` has no option --fast"},
		{"run --bg local echo from-a-job", "job 1 started"},
		{"health", "No health checks are scheduled"},
		{"reset", "this thread's conversation is forgotten"},
		{"why is the disk full?", "set ANTHROPIC_API_KEY"},
	}
	for i, s := range steps {
		thread := fmt.Sprintf("c%d", i)
		h.say("alice", thread, s.say)
		h.eventually(fmt.Sprintf("the answer to %q", s.say), h.has(thread, s.want))
	}
	// The job's thread lists it, shows it, and it cannot be cancelled once
	// it ended.
	const jobs = "c11"
	h.eventually("the job's end", h.has(jobs, "job 1 (`echo from-a-job` on local) succeeded"))
	h.say("alice", jobs, "jobs")
	h.eventually("the job list", h.has(jobs, "• job 1"))
	h.say("alice", jobs, "job 1")
	h.eventually("the job", h.has(jobs, "from-a-job\n"))
	h.say("alice", jobs, "cancel #1")
	h.eventually("the refusal", h.has(jobs, "Job 1 is not running."))
}

// `health` lists the schedules and `health NAME` runs one into the thread.
func TestHealthCommand(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 1)
	h := newHarnessWith(t, botOptions{health: fakeHealth{ran: ran}})
	h.say("alice", "t1", "health")
	h.eventually("the schedules", h.has("t1", "`nightly` — `@daily`, checks disk, next 2030-01-02"))
	h.eventually("that it never ran", h.has("t1", "not run yet"))
	h.say("alice", "t2", "health weekly")
	h.eventually("the unknown schedule", h.has("t2", "There is no schedule \"weekly\". Schedules: `nightly`."))
	h.say("alice", "t3", "health nightly")
	if got := <-ran; got != "nightly" {
		t.Errorf("ran %q", got)
	}
	h.eventually("the report", func() bool { return len(h.conn.thread("t3")) > 0 })
	if p, ok := h.bot.platforms.ReportPoster("web"); !ok || p.Limits().MaxText != webLimits.MaxText {
		t.Error("no report poster for the web connector")
	}
	if _, ok := h.bot.platforms.ReportPoster("irc"); ok {
		t.Error("a report poster for a platform that is not configured")
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := (Config{Access: map[string][]string{"ops": {"alice"}}}).Validate(); err != nil {
		t.Errorf("valid access: %v", err)
	}
	err := Config{Access: map[string][]string{"ops": {}}}.Validate()
	var fe interface{ Field() string }
	if !errors.As(err, &fe) || fe.Field() != "access.ops" || !strings.Contains(err.Error(), "lists nobody") {
		t.Errorf("an access entry listing nobody: %v", err)
	}
}

// With the agent on, a question that begins with a command's word goes
// to the model: "help me …" got the help text, "reset the nginx service"
// forgot the thread's conversation. The bare words stay commands.
func TestQuestionsThatBeginWithACommandWordGoToTheAgent(t *testing.T) {
	t.Parallel()
	questions := []string{
		"help me read this log",
		"reset the nginx service on web-1",
		"jobs are failing on web-2, why?",
		"hosts in eu look slow",
		"cancel the deploy if it is stuck",
		"health of web-1 looks bad",
	}
	var script []func(context.Context, agent.Request, func(agent.StreamEvent) bool)
	for i := range questions {
		script = append(script, text(fmt.Sprintf("Answer %d.", i)))
	}
	h := newHarness(t, approvals.GateConfig{}, &model{steps: script})
	for i, q := range questions {
		thread := fmt.Sprintf("q%d", i)
		h.say("alice", thread, q)
		h.eventually(fmt.Sprintf("the model's answer to %q", q), h.has(thread, fmt.Sprintf("Answer %d.", i)))
	}
	h.say("alice", "bare", "help")
	h.eventually("the help text", h.has("bare", "run <target> <command>"))
	h.say("alice", "bare", "cancel 999")
	h.eventually("the job command", h.has("bare", "This thread has no job 999"))
}
