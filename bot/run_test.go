package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// recordingExec runs commands with the real executor and reports the
// options each run was given.
type recordingExec struct {
	hosts.Executor
	opts chan hosts.ExecOptions
}

func (r *recordingExec) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	r.opts <- opts
	return r.Executor.Exec(ctx, names, command, opts)
}

// recordExec has opt's bot run its commands through a recordingExec,
// whose options it returns.
func recordExec(opt *botOptions) chan hosts.ExecOptions {
	opts := make(chan hosts.ExecOptions, 10)
	opt.exec = func(e hosts.Executor) hosts.Executor { return &recordingExec{Executor: e, opts: opts} }
	return opts
}

// A chat `run` is bounded by the configured exec timeout, or by its own
// --timeout; not by a fixed minute.
func TestRunUsesTheConfiguredTimeout(t *testing.T) {
	t.Parallel()
	opt := botOptions{limits: func(c *Config) { c.RunTimeout = 7 * time.Minute }}
	opts := recordExec(&opt)
	h := newHarnessWith(t, opt)
	h.say("alice", "t1", "run local echo hi")
	if got := (<-opts).Timeout; got != 7*time.Minute {
		t.Errorf("run timeout = %v; want the configured 7m", got)
	}
	h.say("alice", "t2", "run --timeout 90s local echo hi")
	if got := (<-opts).Timeout; got != 90*time.Second {
		t.Errorf("run --timeout 90s ran with %v", got)
	}
	h.eventually("the output", h.has("t2", "exit 0"))
}

func TestRunDefaultTimeoutIsAMinute(t *testing.T) {
	t.Parallel()
	if got := (Config{}).WithDefaults().RunTimeout; got != time.Minute {
		t.Errorf("default run timeout = %v", got)
	}
}

// Options `run` cannot read are answered with what it takes.
func TestRunBadOptionsAnswerWithUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	for i, tc := range []struct{ text, want string }{
		{"run --timeout soon local uptime", "`--timeout` wants a duration like 90s, 5m or 2h (at most 24h), not \"soon\""},
		{"run --timeout 0s local uptime", "`--timeout` wants a duration"},
		{"run --timeout 48h local uptime", "at most 24h"},
		{"run --timeout", "`--timeout` wants a duration"},
		{"run --fast local uptime", "`run` has no option --fast"},
		{"run --bg local", "Usage: `run [--timeout 5m] [--bg] <target> <command>`"},
	} {
		th := "bad" + string(rune('a'+i))
		h.say("alice", th, tc.text)
		h.eventually("the usage answer to "+tc.text, h.has(th, tc.want))
		if !strings.Contains(h.conn.thread(th)[0].msg.Text, "Usage: `run [--timeout 5m] [--bg]") {
			t.Errorf("%q: the answer lacks the usage line: %q", tc.text, h.conn.thread(th)[0].msg.Text)
		}
	}
}

// `run --bg` starts a background job: `jobs` lists it and its end is
// reported in the thread.
func TestRunBackgroundStartsAJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run --bg local echo from the background")
	h.eventually("the job's start", h.has("t1", "job 1 started: `echo from the background` on local"))
	h.eventually("the job's end", h.has("t1", "🔔 job 1"))
	h.say("alice", "t1", "jobs")
	h.eventually("the jobs list", h.has("t1", "• job 1: `echo from the background` on local — succeeded"))
}

// A background job goes through the same policy and approval as any run.
func TestRunBackgroundWaitsForApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "made-by-job")
	h.say("alice", "t1", "run --bg local touch "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	if jobs, _ := h.st.Jobs().Jobs(context.Background(), 1, 10); len(jobs) != 0 {
		t.Fatalf("a job started before approval: %+v", jobs)
	}
	card, ref, _ := h.find("t1", "Approval needed")
	h.click("bob", card, ref, ActionApprove)
	h.eventually("the job's end", h.has("t1", "🔔 job 1"))
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the approved job did not run: %v", err)
	}
	h.say("alice", "t2", "run --bg local mkfs.ext4 /dev/sda1")
	h.eventually("the refusal", h.has("t2", "denied by policy"))
}

func TestHelpShowsRunOptions(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"--timeout", "--bg", "jobs"} {
		if !strings.Contains(helpText, want) {
			t.Errorf("help does not mention %s", want)
		}
	}
}

// Output longer than one message shows its end, in that one message, with
// a note saying how much was cut.
func TestLongOutputOpensAtItsTail(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local seq 1 5000")
	h.eventually("the result", h.has("t1", "exit 0"))
	msgs := h.conn.thread("t1")
	if len(msgs) != 1 {
		t.Fatalf("the output took %d messages; want one: %s", len(msgs), h.dump())
	}
	text := msgs[0].msg.Text
	if !strings.Contains(text, "\n4999\n5000\n```") {
		t.Errorf("the message does not end with the output's last lines:\n%s", text)
	}
	if strings.Contains(text, "\n1\n2\n3\n") || !strings.Contains(text, "lines are cut; the last") {
		t.Errorf("the message does not say the beginning was cut:\n%.300s", text)
	}
	if len(text) > webLimits.MaxText {
		t.Errorf("the message holds %d bytes; the platform takes %d", len(text), webLimits.MaxText)
	}
}

func TestOutputTailView(t *testing.T) {
	t.Parallel()
	o := &outputTail{limit: 20}
	o.Write("one\ntwo\n")
	if got := o.View(); got != "```\none\ntwo\n```" {
		t.Errorf("short output: %q", got)
	}
	o.Write("three\nfour\nfive\nsix\n")
	got := o.View()
	if !strings.HasPrefix(got, "_… the first 2 lines are cut; the last 4 follow._\n```\nthree\n") || !strings.HasSuffix(got, "six\n```") {
		t.Errorf("cut output: %q", got)
	}
	o = &outputTail{limit: 100}
	o.Write("a ``` b\n")
	if got := o.View(); !strings.HasPrefix(got, "````\n") || !strings.HasSuffix(got, "\n````") {
		t.Errorf("the fence does not outlast the output's backticks: %q", got)
	}
	if got := (&outputTail{limit: 10}).View(); got != "_(no output)_" {
		t.Errorf("no output: %q", got)
	}
}

// After an agent turn the thread shows what ran: the command, its host,
// how it ended and the end of its output.
func TestAgentTurnShowsWhatRan(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		toolCall("run_command", `{"target":"local","command":"seq 1 20"}`),
		text("Counted to twenty."),
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "count please")
	h.eventually("what ran", h.has("t1", "**What ran**"))
	ran, _, _ := h.find("t1", "**What ran**")
	want := "**What ran**\n✓ `seq 1 20` on local — exit 0 in "
	if !strings.HasPrefix(ran.msg.Text, want) || !strings.HasSuffix(ran.msg.Text, "```output\n…\n16\n17\n18\n19\n20\n```") {
		t.Errorf("what ran:\n%s\nwant %q, then the output's last lines", ran.msg.Text, want)
	}
	answer, _, _ := h.find("t1", "Counted to twenty.")
	if !strings.Contains(answer.msg.Context, "✓ `seq 1 20` on local: exit 0") {
		t.Errorf("the answer's status line: %q", answer.msg.Context)
	}
}

func TestRanTextKeepsTheLatestWithinTheLimit(t *testing.T) {
	t.Parallel()
	var runs []agent.CommandRun
	for i := range 50 {
		runs = append(runs, agent.CommandRun{Host: "web-1", Command: fmt.Sprintf("check %d", i), Output: strings.Repeat("x", 100)})
	}
	runs = append(runs, agent.CommandRun{Host: "db-1", Command: "psql -c 'select 1'", Err: "ssh: handshake failed\nmore", ExitCode: -1})
	got := ranText(runs, 2000)
	if len(got) > 2000 || !strings.Contains(got, "earlier commands not shown") || !strings.HasSuffix(got, "✗ `psql -c 'select 1'` on db-1 — could not run: ssh: handshake failed") {
		t.Errorf("%d bytes:\n%s", len(got), got)
	}
}

// A job is cancelled by who started it or an approver; others are told why
// not.
func TestOnlyTheStarterOrAnApproverMayCancelAJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run --bg local sleep 30")
	h.eventually("the job's start", h.has("t1", "job 1 started"))
	h.say("mallory", "t1", "cancel 1")
	h.eventually("the refusal", h.has("t1", "Not cancelled: only @alice, who started job 1, or an approver may cancel it."))
	h.say("bob", "t1", "cancel 1")
	h.eventually("the job's end", h.has("t1", "🔔 job 1"))
	if j, _ := h.st.Jobs().Job(context.Background(), 1); j.State != "cancelled" {
		t.Errorf("job state %q; want cancelled", j.State)
	}
}

// `job <id>` shows the end of a long job's output within one message.
func TestJobShowsTheEndOfItsOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run --bg local seq 1 2000")
	h.eventually("the job's end", h.has("t1", "🔔 job 1"))
	h.say("alice", "t1", "job 1")
	h.eventually("the job", h.has("t1", "job 1: `seq 1 2000` on local — succeeded, exit 0"))
	m, _, _ := h.find("t1", "job 1: `seq 1 2000` on local — succeeded")
	if !strings.HasSuffix(m.msg.Text, "\n1999\n2000\n```") || len(m.msg.Text) > webLimits.MaxText {
		t.Errorf("%d bytes, ending %q", len(m.msg.Text), m.msg.Text[max(0, len(m.msg.Text)-40):])
	}
}

// TestSummaryNamesTheHostsThatFailed: a fan-out's summary says which
// hosts failed and how, in words, not only how many.
func TestSummaryNamesTheHostsThatFailed(t *testing.T) {
	t.Parallel()
	spec := runSpec{Command: "systemctl is-active nginx", Target: "group:web", Timeout: time.Minute}
	var results []hosts.ExecResult
	for i := range 10 {
		results = append(results, hosts.ExecResult{Host: fmt.Sprintf("web-%d", i+1)})
	}
	results[2].ExitCode = 3
	results[6].Err = fmt.Errorf("hosts: web-7: connect: dial tcp 10.0.0.7:22: %w", syscall.ECONNREFUSED)
	got := summarize(spec, results)
	want := "✗ `systemctl is-active nginx` on group:web: 10 hosts, 2 failed — web-3: exit 3; web-7: could not run: nothing answers on its SSH port (connection refused)"
	if got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	one := summarize(runSpec{Command: "uptime", Target: "web-7"}, results[6:7])
	if strings.Contains(one, "dial tcp") || !strings.Contains(one, "could not run: nothing answers on its SSH port") {
		t.Errorf("one host: %s", one)
	}
	if all := summarize(spec, results[:2]); !strings.Contains(all, "2 hosts, all exit 0") {
		t.Errorf("all ok: %s", all)
	}
}

// Platforms count a message's length in characters: output in a script of
// two-byte letters fills the message, not half of it.
func TestOutputLimitsCountCharacters(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("ёж", 10) + "\n" // 21 characters, 41 bytes
	o := &outputTail{limit: 100}
	o.Write(strings.Repeat(line, 10))
	if kept := strings.Count(o.tail, "\n"); kept != 4 || render.Chars(o.tail) > 100 {
		t.Errorf("kept %d lines (%d characters) within 100 characters; want 4", kept, render.Chars(o.tail))
	}
	var runs []agent.CommandRun
	for i := range 20 {
		runs = append(runs, agent.CommandRun{Host: "web-1", Command: fmt.Sprintf("check %d", i), Output: strings.Repeat("я", 100)})
	}
	got := ranText(runs, 2000)
	if n := render.Chars(got); n > 2000 || n < 1400 {
		t.Errorf("what ran holds %d characters of the 2000 a message holds", n)
	}
}

// A person mentioned in a chat `run` reaches the policy as the plain
// @name a reader sees, not as the connector's mention placeholder: the
// command is judged, and runs, as the plain text would.
func TestRunWithAMentionRunsAsPlainText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local echo hi "+connectors.Mention("bob"))
	h.eventually("the output", h.has("t1", "hi @bob"))
	h.eventually("the exit", h.has("t1", "exit 0"))
}
