package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/store"
)

// Decision is the policy's verdict on a command: "allow", "approve" or
// "deny", with the reasons. It is decided by code, never by the model.
type Decision struct {
	Action  string
	Reasons []string
	// ConnectPorts are the TCP ports of the network destinations an
	// allowed command names: its sandbox lets it connect to those only.
	ConnectPorts []uint16
}

// The policy actions.
const (
	Allow   = "allow"
	Approve = "approve"
	Deny    = "deny"
)

// Policy classifies a command for a host.
type Policy interface {
	Check(host, command string) Decision
}

// ApprovalRequest asks people to approve one command.
type ApprovalRequest struct {
	Target string
	// Hosts is what Target resolved to: the approval binds these, so a
	// group that changes meanwhile cannot widen it.
	Hosts     []string
	Command   string
	Cwd       string
	Reasons   []string
	Session   SessionInfo
	SessionID int64
}

// ApprovalOutcome is how a request ended.
type ApprovalOutcome struct {
	Approved  bool
	State     string // approved, denied, expired
	DecidedBy string
}

// Approver waits for people to decide on a request; pending is called once
// the request is recorded, so the caller can show it.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest, pending func(PendingApproval)) (ApprovalOutcome, error)
}

// Confinement is how a command the Guard authorized runs on the bot's own
// host. The zero value is the strict one: nobody approved the run, so it
// runs in the sandbox (hosts.Sandbox) with no network.
type Confinement struct {
	// Approved says a person approved this run: it runs as the bot does,
	// outside the sandbox.
	Approved bool
	// ConnectPorts are the TCP ports the policy let an unapproved command
	// connect to (Decision.ConnectPorts).
	ConnectPorts []uint16
}

// Permit is what the Guard lets run: on which hosts, and how confined.
type Permit struct {
	Hosts []string
	Confinement
}

// ExecOptions tunes one command run.
type ExecOptions struct {
	// Confinement comes from the Guard's Permit, never from the model.
	Confinement
	Timeout time.Duration
	Stdin   string
	Dir     string
	// Dir applies to the local host only; SSH hosts run in their login
	// directory.
	// OnOutput, when set, receives output as it arrives.
	OnOutput func(host string, stderr bool, data []byte)
}

// ExecResult is one host's outcome.
type ExecResult struct {
	Host      string
	ExitCode  int
	Signal    string
	Stdout    string
	Stderr    string
	Duration  time.Duration
	Truncated bool
	Killed    bool  // by the deadline or a cancel
	Err       error // could not run at all (connect, auth, host key)
}

// Executor runs commands on hosts.
type Executor interface {
	// Resolve turns a target (NAME, group:NAME, a comma list) into hosts.
	Resolve(target string) ([]string, error)
	// Exec runs command on each host, concurrently, returning in host order.
	Exec(ctx context.Context, hosts []string, command string, opts ExecOptions) []ExecResult
}

// Guard puts every command the agent runs through the policy and, when the
// policy says so, through people: the one path to an Executor.
type Guard struct {
	Policy   Policy
	Approver Approver
	Exec     Executor
	// DirOnAllHosts says the caller runs commands in cwd on every host
	// (opsbot hosts exec --dir), so approvals bind it for every target.
	DirOnAllHosts bool
	// Metrics counts the commands that do not run (denied, not
	// approved); Metrics.Executor counts those that do. May be nil.
	Metrics *Metrics
}

// errRefused is a refusal the model must read, not a failure.
type errRefused struct{ msg string }

func (e *errRefused) Error() string { return e.msg }

// localHost is the built-in host that is the bot's own machine: the only
// one where a working directory applies (ExecOptions.Dir).
const localHost = "local"

// Authorize resolves the target and decides: nil means the command may run
// on the returned hosts now. The strictest decision over the hosts wins.
// cwd is the directory the command will run in on the local host; it is
// part of what an approval binds, and empty for other targets, where it
// does not apply.
func (g *Guard) Authorize(ctx context.Context, call ToolCall, target, command, cwd string) ([]string, error) {
	p, err := g.Permit(ctx, call, target, command, cwd)
	return p.Hosts, err
}

// Permit is Authorize that also says how the command must run: sandboxed
// when the policy allowed it without a person, as the bot when a person
// approved it. Pass its Confinement on in ExecOptions.
func (g *Guard) Permit(ctx context.Context, call ToolCall, target, command, cwd string) (Permit, error) {
	hosts, err := g.Exec.Resolve(target)
	if err != nil {
		return Permit{}, &errRefused{err.Error()}
	}
	if !g.DirOnAllHosts && (len(hosts) != 1 || hosts[0] != localHost) {
		cwd = ""
	}
	d := g.decide(hosts, command)
	switch d.Action {
	case Allow:
		return Permit{Hosts: hosts, Confinement: Confinement{ConnectPorts: d.ConnectPorts}}, nil
	case Approve:
		err := g.approve(ctx, call, target, hosts, command, cwd, d.Reasons)
		if err != nil {
			g.Metrics.refused(Approve, notApproved(ctx))
		}
		return Permit{Hosts: hosts, Confinement: Confinement{Approved: true}}, err
	}
	g.Metrics.refused(Deny, "refused")
	return Permit{}, &errRefused{"denied by policy: " + strings.Join(d.Reasons, "; ")}
}

// notApproved is the result of a command that waited for people and did
// not run: stopped while it waited, or not approved.
func notApproved(ctx context.Context) string {
	if ctx.Err() != nil {
		return "cancelled"
	}
	return "not_approved"
}

func (g *Guard) decide(hosts []string, command string) Decision {
	rank := map[string]int{Allow: 0, Approve: 1, Deny: 2}
	worst := Decision{Action: Allow}
	for _, h := range hosts {
		d := g.Policy.Check(h, command)
		if _, known := rank[d.Action]; !known {
			d = Decision{Action: Deny, Reasons: []string{fmt.Sprintf("policy returned %q", d.Action)}}
		}
		if rank[d.Action] > rank[worst.Action] {
			worst = d
		}
		if d.Action == Allow && worst.Action == Allow {
			worst.ConnectPorts = append(worst.ConnectPorts, d.ConnectPorts...)
		}
	}
	return worst
}

func (g *Guard) approve(ctx context.Context, call ToolCall, target string, hosts []string, command, cwd string, reasons []string) error {
	if g.Approver == nil {
		return &errRefused{"needs approval, and no one can approve here: " + strings.Join(reasons, "; ")}
	}
	req := ApprovalRequest{Target: target, Hosts: hosts, Command: command, Cwd: cwd, Reasons: reasons, Session: call.Session, SessionID: call.Session.ID}
	// Time spent waiting for people is not the turn's: the card's expiry
	// decides how long they have.
	done := waitingForPeople(ctx)
	defer done()
	out, err := g.Approver.Approve(ctx, req, func(p PendingApproval) {
		call.Emit(Event{Kind: ApprovalPending, Tool: call.Name, ToolID: call.ID, Approval: &p})
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &errRefused{"approval failed: " + storeWords(err)}
	}
	if !out.Approved {
		who := ""
		if out.DecidedBy != "" {
			who = " by " + out.DecidedBy
		}
		return &errRefused{fmt.Sprintf("not run: the approval request was %s%s", out.State, who)}
	}
	return nil
}

// refusal turns an Authorize error into the tool result the model reads.
func refusal(err error) ToolResult {
	var r *errRefused
	if errors.As(err, &r) {
		return ToolResult{Content: r.msg, IsError: true, Summary: r.msg}
	}
	return Errorf("%v", err)
}

// RunCommandTool is `run_command`: a command on a target, through the guard.
type RunCommandTool struct {
	Guard *Guard
	// MaxTimeout caps what the model may ask for (default 10m).
	MaxTimeout time.Duration
}

type runCommandInput struct {
	Target  string `json:"target"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // seconds
}

// Spec describes the tool.
func (*RunCommandTool) Spec() ToolSpec {
	return ToolSpec{Name: "run_command", Description: "Run a shell command on a target: a host name, group:NAME, or a comma list. A group or a list fans out: the command runs on every host at once and the result starts with one line per host (exit status), then each host's output. Prefer one command across a group to one call per host. Read-only diagnostics run at once; anything else waits for a person to approve it, and may be denied (policy_check tells which). Output is capped to its head and tail; use tail_file for logs.",
		InputSchema: schema(`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"command":{"type":"string"},"timeout":{"type":"integer","description":"seconds, default 60"}},"required":["target","command"]}`)}
}

// Describe is the status line.
func (*RunCommandTool) Describe(call ToolCall) string {
	var in runCommandInput
	if decodeInput(call, &in) != nil {
		return "running a command"
	}
	return fmt.Sprintf("running `%s` on %s…", in.Command, in.Target)
}

// Call authorizes, runs, and reports.
func (t *RunCommandTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in runCommandInput
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(in.Target) == "" || strings.TrimSpace(in.Command) == "" {
		return Errorf("run_command needs a target and a command")
	}
	permit, err := t.Guard.Permit(ctx, call, in.Target, in.Command, call.Session.Cwd)
	if err != nil {
		return refusal(err)
	}
	timeout := min(time.Duration(max(in.Timeout, 0))*time.Second, orDefault(t.MaxTimeout, 10*time.Minute))
	if timeout == 0 {
		timeout = time.Minute
	}
	results := t.Guard.Exec.Exec(ctx, permit.Hosts, in.Command, ExecOptions{Confinement: permit.Confinement, Timeout: timeout, Dir: call.Session.Cwd})
	res := formatResults(in.Command, results)
	res.Runs = runsOf(in.Command, results)
	for i := range res.Runs {
		res.Runs[i].Approved = permit.Approved
	}
	return res
}

func status(r ExecResult) string {
	s := fmt.Sprintf("exit %d in %s", r.ExitCode, r.Duration.Round(time.Millisecond))
	if r.Signal != "" {
		s = fmt.Sprintf("killed by %s after %s", r.Signal, r.Duration.Round(time.Millisecond))
	}
	if r.Killed {
		s += " (timed out or cancelled)"
	}
	if r.Truncated {
		s += ", output truncated"
	}
	return s
}

// storeWords is what a person is told of err: a write the database
// refused says so in its own words, without the wrapping's prefixes.
func storeWords(err error) string {
	var u *store.Unavailable
	if errors.As(err, &u) {
		return u.Error()
	}
	return err.Error()
}
