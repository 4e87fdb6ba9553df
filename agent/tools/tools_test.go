package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// fakePolicy decides by a table of commands; the rest is approve.
type fakePolicy map[string]policy.Action

func (p fakePolicy) Check(_, command string) approvals.HostDecision {
	if a, ok := p[command]; ok {
		return approvals.HostDecision{Action: a, Reasons: []string{"rule for " + command}}
	}
	return approvals.HostDecision{Action: policy.Approve, Reasons: []string{"not known to be read-only"}}
}

// fakeApprover answers every request the same way and records them.
type fakeApprover struct {
	mu      sync.Mutex
	answer  approvals.Outcome
	request []approvals.CommandRequest
}

func (f *fakeApprover) Approve(_ context.Context, req approvals.CommandRequest, pending func(approvals.Pending)) (approvals.Outcome, error) {
	f.mu.Lock()
	f.request = append(f.request, req)
	f.mu.Unlock()
	pending(approvals.Pending{ID: "ap1", Target: req.Target, Command: req.Command, Reasons: req.Reasons})
	return f.answer, nil
}

// shellExec runs commands with bash on this machine: the hosts package's
// own runner is tested there; here only what reaches it matters.
type shellExec struct {
	mu  sync.Mutex
	ran []string
}

func (e *shellExec) Resolve(target string) ([]string, error) {
	return strings.Split(target, ","), nil
}

func (e *shellExec) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	var out []hosts.ExecResult
	for _, h := range names {
		e.mu.Lock()
		e.ran = append(e.ran, h+": "+command)
		e.mu.Unlock()
		start := time.Now()
		cmd := exec.CommandContext(ctx, "bash", "-c", command)
		cmd.Dir, cmd.Stdin = opts.Dir, strings.NewReader(opts.Stdin)
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		r := hosts.ExecResult{Host: h, Stdout: so.String(), Stderr: se.String(), Duration: time.Since(start)}
		if ee, ok := err.(*exec.ExitError); ok {
			r.ExitCode = ee.ExitCode()
		} else if err != nil {
			r.Err = err
		}
		out = append(out, r)
	}
	return out
}

func (e *shellExec) commands() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.ran...)
}

// gatedExec runs commands as shellExec does, but holds each result back
// until release is closed (or the run is cancelled): the test decides
// when a job ends.
type gatedExec struct {
	shellExec
	release chan struct{}
}

func (e *gatedExec) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	res := e.shellExec.Exec(ctx, names, command, opts)
	select {
	case <-e.release:
	case <-ctx.Done():
	}
	return res
}

// startJob starts command as a job of sess on the local host, in the
// session's directory, confined as nobody approved it.
func startJob(j *hosts.Jobs, sess agent.SessionInfo, command string) (hosts.Job, error) {
	return j.Start(context.Background(), hosts.Job{SessionID: sess.ID, Host: "local", Command: command, Requester: sess.Requester}, sess.Cwd, hosts.Confinement{})
}

func runCommand(t *testing.T, g *approvals.Guard, target, command string) (agent.ToolResult, []agent.Event) {
	t.Helper()
	rec := &testfake.Recorder{}
	tool := &RunCommand{Guard: g}
	res := tool.Call(context.Background(), agent.ToolCall{ID: "t1", Name: "run_command", Emit: rec.Emit, Session: agent.SessionInfo{ID: 1, Requester: "alice"},
		Input: []byte(testfake.JSON(map[string]string{"target": target, "command": command}))})
	return res, rec.Events
}

func TestRunCommandFollowsThePolicyWhateverTheModelSays(t *testing.T) {
	t.Parallel()
	fake := fakePolicy{"echo hi": policy.Allow, "rm -rf /tmp/x": policy.Approve, "mkfs /dev/sda": policy.Deny}
	cases := []struct {
		name, command string
		answer        approvals.Outcome
		wantRun       bool
		wantIn        string
	}{
		{"allowed runs at once", "echo hi", approvals.Outcome{}, true, "hi\n"},
		{"denied by policy never asks", "mkfs /dev/sda", approvals.Outcome{}, false, "denied by policy: rule for mkfs /dev/sda"},
		{"approval denied", "rm -rf /tmp/x", approvals.Outcome{State: "denied", DecidedBy: "bob"}, false, "was denied by bob"},
		{"approval expired", "rm -rf /tmp/x", approvals.Outcome{State: "expired"}, false, "was expired"},
		{"approved runs", "rm -rf /tmp/x", approvals.Outcome{Approved: true, State: "approved", DecidedBy: "bob"}, true, "exit 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ex, ap := &shellExec{}, &fakeApprover{answer: c.answer}
			// rm -rf on a path that does not exist here is harmless.
			cmd := c.command
			if strings.HasPrefix(cmd, "rm") {
				cmd = "rm -rf /tmp/x"
			}
			res, events := runCommand(t, &approvals.Guard{Policy: fake, Approver: ap, Exec: ex}, "local", cmd)
			if ran := len(ex.commands()) > 0; ran != c.wantRun {
				t.Errorf("ran = %v; want %v (%+v)", ran, c.wantRun, res)
			}
			if !strings.Contains(res.Content, c.wantIn) {
				t.Errorf("result %q does not contain %q", res.Content, c.wantIn)
			}
			asked := len(ap.request) > 0
			if wantAsk := fake.Check("", cmd).Action == policy.Approve; asked != wantAsk {
				t.Errorf("asked for approval = %v; want %v", asked, wantAsk)
			}
			if asked && (len(events) == 0 || events[0].Kind != agent.ApprovalPending || ap.request[0].Requester.ID != "alice") {
				t.Errorf("no ApprovalPending event or wrong requester: %+v %+v", events, ap.request)
			}
		})
	}
}

func TestGuardTakesTheStrictestDecisionOverHosts(t *testing.T) {
	t.Parallel()
	ex := &shellExec{}
	g := &approvals.Guard{Policy: policyFunc(func(host, _ string) approvals.HostDecision {
		if host == "db-1" {
			return approvals.HostDecision{Action: policy.Deny, Reasons: []string{"db hosts are off limits"}}
		}
		return approvals.HostDecision{Action: policy.Allow}
	}), Exec: ex}
	res, _ := runCommand(t, g, "web-1,db-1", "uptime")
	if !res.IsError || !strings.Contains(res.Content, "off limits") || len(ex.commands()) != 0 {
		t.Errorf("one denied host did not stop the run: %+v, ran %v", res, ex.commands())
	}
	g.Policy = policyFunc(func(string, string) approvals.HostDecision {
		return approvals.HostDecision{Action: policy.Action(7)}
	})
	if res, _ := runCommand(t, g, "web-1", "uptime"); !res.IsError || len(ex.commands()) != 0 {
		t.Errorf("an unknown policy action was not treated as deny: %+v", res)
	}
}

type policyFunc func(host, command string) approvals.HostDecision

func (f policyFunc) Check(host, command string) approvals.HostDecision { return f(host, command) }

func writeSkill(t *testing.T, root, name, body string, scripts map[string]string) {
	t.Helper()
	dir := filepath.Join(root, name)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: check "+name+"\n---\n"+body), 0o644)
	for f, content := range scripts {
		os.WriteFile(filepath.Join(dir, f), []byte(content), 0o755)
	}
}

func TestSkillsLoadOnDemandAndScriptsStayConfined(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "disk", "Run ./usage.sh and read the biggest.", map[string]string{"usage.sh": "#!/bin/sh\necho \"args: $*\"; cat; echo oops >&2; exit 3\n"})
	writeSkill(t, root, "nginx", "Look at the error log.", nil)
	outside := filepath.Join(t.TempDir(), "evil.sh")
	os.WriteFile(outside, []byte("#!/bin/sh\necho evil\n"), 0o755)
	os.Symlink(outside, filepath.Join(root, "disk", "link.sh"))

	skills, err := agent.LoadSkills([]string{root})
	if err != nil || len(skills) != 2 {
		t.Fatalf("LoadSkills = %+v, %v", skills, err)
	}
	index := agent.SkillIndex(skills)
	if !strings.Contains(index, "disk: check disk") || strings.Contains(index, "Run ./usage.sh") {
		t.Errorf("the index must list names and descriptions only: %q", index)
	}
	load := &LoadSkill{Skills: skills}
	if res := load.Call(context.Background(), agent.ToolCall{Name: "load_skill", Input: []byte(`{"name":"disk"}`)}); !strings.Contains(res.Content, "Run ./usage.sh") {
		t.Errorf("load_skill = %+v", res)
	}
	if res := load.Call(context.Background(), agent.ToolCall{Name: "load_skill", Input: []byte(`{"name":"nope"}`)}); !res.IsError {
		t.Error("unknown skill loaded")
	}

	ex := &shellExec{}
	tool := &RunSkillScript{Skills: skills, Guard: &approvals.Guard{Policy: policyFunc(func(string, string) approvals.HostDecision { return approvals.HostDecision{Action: policy.Allow} }), Exec: ex}}
	call := func(input string) agent.ToolResult {
		return tool.Call(context.Background(), agent.ToolCall{Name: "run_skill_script", Input: []byte(input), Emit: func(agent.Event) {}})
	}
	res := call(`{"skill":"disk","script":"usage.sh","args":["/var","a b"],"stdin":"from stdin"}`)
	for _, want := range []string{"exit_code: 3", "args: /var a b", "from stdin", "--- stderr ---\noops", "killed: false"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("run_skill_script result lacks %q:\n%s", want, res.Content)
		}
	}
	for _, escape := range []string{`"../nginx/SKILL.md"`, `"/etc/passwd"`, `"link.sh"`, `"../../../../bin/sh"`, `""`} {
		if res := call(`{"skill":"disk","script":` + escape + `}`); !res.IsError || strings.Contains(res.Content, "evil") {
			t.Errorf("script %s was not refused: %+v", escape, res)
		}
	}
	if n := len(ex.commands()); n != 1 {
		t.Errorf("%d scripts ran; want only the confined one", n)
	}
}

func TestSkillScriptsGoThroughThePolicy(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "fix", "Fixes things.", map[string]string{"fix.sh": "#!/bin/sh\ntouch /tmp/should-not-exist\n"})
	skills, _ := agent.LoadSkills([]string{root})
	ex, ap := &shellExec{}, &fakeApprover{answer: approvals.Outcome{State: "denied", DecidedBy: "bob"}}
	tool := &RunSkillScript{Skills: skills, Guard: &approvals.Guard{Policy: fakePolicy{}, Approver: ap, Exec: ex}}
	res := tool.Call(context.Background(), agent.ToolCall{Name: "run_skill_script", Input: []byte(`{"skill":"fix","script":"fix.sh"}`), Emit: func(agent.Event) {}})
	if !res.IsError || len(ex.commands()) != 0 || len(ap.request) != 1 {
		t.Errorf("a script the policy wants approved ran without it: %+v", res)
	}
}

func TestBadSkillIsAnErrorNamingTheFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "broken"), 0o755)
	os.WriteFile(filepath.Join(root, "broken", "SKILL.md"), []byte("no front matter"), 0o644)
	if _, err := agent.LoadSkills([]string{root}); err == nil || !strings.Contains(err.Error(), "broken/SKILL.md") {
		t.Errorf("err = %v", err)
	}
}

func TestJobsNotifyTheAgentBeforeItsNextCall(t *testing.T) {
	t.Parallel()
	st, sess := testfake.Store(t)
	ex := &gatedExec{release: make(chan struct{})}
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: ex}
	defer jobs.Close()
	guard := &approvals.Guard{Policy: policyFunc(func(string, string) approvals.HostDecision { return approvals.HostDecision{Action: policy.Allow} }), Exec: ex}
	model := &testfake.Model{Steps: []testfake.Step{
		testfake.Calls("", "start_job", `{"target":"local","command":"echo built; exit 2"}`),
		testfake.Text("Started."),
	}}
	a := &agent.Agent{Provider: model, History: persist.History{Store: st}, Notices: persist.Notices{Store: st},
		Tools: agent.NewRegistry(&StartJob{Guard: guard, Jobs: jobs}, &JobStatus{Store: st})}
	if err := a.Turn(context.Background(), sess, "build it", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	// The job's end is held back until the first turn is over, so its
	// notification must wait for the agent's next call.
	if notes, _ := st.Inbox().UninjectedNotifications(context.Background(), sess.ID); len(notes) != 0 {
		t.Fatalf("notifications before the job ended: %+v", notes)
	}
	close(ex.release)
	jobs.Wait()
	if notes, _ := st.Inbox().UninjectedNotifications(context.Background(), sess.ID); len(notes) != 1 {
		t.Fatalf("%d notifications waiting after the job ended; want 1: %+v", len(notes), notes)
	}
	job, _ := st.Jobs().Job(context.Background(), 1)
	if job.State != hosts.JobFailed || job.ExitCode == nil || *job.ExitCode != 2 || !strings.Contains(job.OutputTail, "built") {
		t.Fatalf("job = %+v", job)
	}
	model.Steps = append(model.Steps, testfake.Text("The job failed with exit 2."))
	if err := a.Turn(context.Background(), sess, "how did it go?", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	if early := model.Requests()[1]; strings.Contains(testfake.JSON(early.Messages), "background-job-notification") {
		t.Errorf("a notification reached the model before its job ended: %s", testfake.JSON(early.Messages))
	}
	last := model.Requests()[2]
	if !strings.Contains(testfake.JSON(last.Messages), "background-job-notification") {
		t.Errorf("the notification was not injected: %s", testfake.JSON(last.Messages))
	}
	if notes, _ := st.Inbox().UninjectedNotifications(context.Background(), sess.ID); len(notes) != 0 {
		t.Error("the notification was not marked injected")
	}
	status := (&JobStatus{Store: st}).Call(context.Background(), agent.ToolCall{Name: "job_status", Session: sess, Input: []byte(`{"id":1}`)})
	if !strings.Contains(status.Content, "failed, exit 2") {
		t.Errorf("job_status = %+v", status)
	}
}

func TestApprovalBindsTheDirectoryOnlyWhereItApplies(t *testing.T) {
	t.Parallel()
	ap := &fakeApprover{answer: approvals.Outcome{State: "denied"}}
	g := &approvals.Guard{Policy: fakePolicy{}, Approver: ap, Exec: &shellExec{}}
	call := agent.ToolCall{Name: "run_command", Emit: func(agent.Event) {}, Session: agent.SessionInfo{Cwd: "/srv/session"}}
	Authorize(context.Background(), g, call, "local", "touch x", "/srv/session")
	Authorize(context.Background(), g, call, "web-1", "touch x", "/srv/session")
	g.DirOnAllHosts = true
	Authorize(context.Background(), g, call, "web-1", "touch x", "/srv/session")
	if got := []string{ap.request[0].Cwd, ap.request[1].Cwd, ap.request[2].Cwd}; got[0] != "/srv/session" || got[1] != "" || got[2] != "/srv/session" {
		t.Errorf("approval directories = %q", got)
	}
	Authorize(context.Background(), g, call, "web-2,web-1", "touch x", "")
	if h := ap.request[3].Hosts; len(h) != 2 || h[0] != "web-2" || h[1] != "web-1" {
		t.Errorf("the request does not carry the resolved hosts: %q", h)
	}
}
