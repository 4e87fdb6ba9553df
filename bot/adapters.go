package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// FleetExecutor runs the agent's and the chat commands' commands on the
// fleet: it is the hosts.Executor of a real deployment.
type FleetExecutor struct {
	Fleet *hosts.Fleet
	// StreamLimit caps what is kept of stdout and of stderr each (default
	// 64 KiB, its head and its tail); the combined output the hosts
	// package keeps is capped on its own.
	StreamLimit int
	// Redactor redacts the output before anyone sees it: the chat, the
	// model, job tails (nil: one with the default rules only).
	Redactor *redact.Redactor
}

var _ hosts.Executor = (*FleetExecutor)(nil)

// Resolve turns a target into host names.
func (e *FleetExecutor) Resolve(target string) ([]string, error) {
	hs, err := e.Fleet.Inventory.Resolve(target)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return names, nil
}

// Exec runs command on the hosts through hosts.RunMany.
func (e *FleetExecutor) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	var hs []hosts.Host
	for _, n := range names {
		if h, ok := e.Fleet.Inventory.Lookup(n); ok {
			hs = append(hs, h)
		}
	}
	limit := e.StreamLimit
	if limit <= 0 {
		limit = 64 << 10
	}
	var mu sync.Mutex
	streams := map[string]*[2]tailBuffer{}
	outs := map[string]*[2]*redact.Stream{}
	for _, h := range hs {
		streams[h.Name] = &[2]tailBuffer{{limit: limit}, {limit: limit}}
		outs[h.Name] = e.redactedOutput(h.Name, streams[h.Name], opts.OnOutput)
	}
	hopts := hosts.Options{Timeout: opts.Timeout, Dir: opts.Dir}
	if !opts.Approved { // what no person approved runs in the sandbox
		hopts.Sandbox = &hosts.Sandbox{ConnectPorts: opts.ConnectPorts, Hidden: opts.Hidden, Env: opts.Env}
		hopts.Hidden, hopts.Env, hopts.Scheduled = opts.Hidden, opts.Env, opts.Scheduled
	}
	if opts.Stdin != "" {
		hopts.Stdin = strings.NewReader(opts.Stdin)
	}
	// The working directory is the bot's own (a session's folder): it
	// means nothing on an SSH host, which runs in its login directory.
	runner := hosts.RunnerFunc(func(ctx context.Context, h hosts.Host, command string, o hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
		if !h.IsLocal() {
			o.Dir = ""
		}
		return e.Fleet.Run(ctx, h, command, o, onChunk)
	})
	results := hosts.RunMany(ctx, runner, hs, command, hopts, hosts.FanOut{OnChunk: func(c hosts.Chunk) {
		mu.Lock()
		defer mu.Unlock()
		outs[c.Host][min(int(c.Stream), 2)-1].Write(c.Data)
	}})
	for _, o := range outs {
		o[0].Flush()
		o[1].Flush()
	}
	out := make([]hosts.ExecResult, len(results))
	for i, r := range results {
		s := streams[r.Host.Name]
		out[i] = hosts.ExecResult{Host: r.Host.Name, ExitCode: r.Result.ExitCode, Signal: r.Result.Signal, Duration: r.Result.Duration,
			Stdout: s[0].String(), Stderr: s[1].String(), Truncated: r.Result.Truncated || s[0].cut || s[1].cut,
			Killed: r.Result.TimedOut || errors.Is(r.Err, context.Canceled), Err: r.Err}
	}
	if len(names) != len(hs) {
		out = append(out, hosts.ExecResult{Host: strings.Join(names, ","), ExitCode: -1, Err: errors.New("unknown host")})
	}
	return out
}

// redactedOutput is a host's stdout and stderr behind the redactor: each
// holds back its unfinished last line, so a secret split across chunks is
// caught, and passes on redacted lines to the kept tail and onOutput.
func (e *FleetExecutor) redactedOutput(host string, tails *[2]tailBuffer, onOutput func(string, bool, []byte)) *[2]*redact.Stream {
	red := e.Redactor
	if red == nil {
		red = redact.New()
	}
	var out [2]*redact.Stream
	for i := range out {
		out[i] = red.NewStream(func(s string) error {
			tails[i].Write([]byte(s))
			if onOutput != nil {
				onOutput(host, i == 1, []byte(s))
			}
			return nil
		})
	}
	return &out
}

// tailBuffer keeps the head and the tail of what is written to it,
// limit bytes in all: the column headers and the first error, and how the
// command ended (exec.output_limit keeps head and tail the same way).
type tailBuffer struct {
	limit     int
	head, buf []byte
	cut       bool
	cutBytes  int
}

func (t *tailBuffer) Write(p []byte) {
	if n := min(t.limit/2-len(t.head), len(p)); n > 0 {
		t.head, p = append(t.head, p[:n]...), p[n:]
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - (t.limit - t.limit/2); over > 0 {
		t.buf, t.cut, t.cutBytes = append(t.buf[:0:0], t.buf[over:]...), true, t.cutBytes+over
	}
}

func (t *tailBuffer) String() string {
	if t.cut {
		return strings.ToValidUTF8(string(t.head), "") + fmt.Sprintf("\n…[%d bytes of output cut here]…\n", t.cutBytes) +
			strings.ToValidUTF8(string(t.buf), "")
	}
	return string(t.head) + string(t.buf)
}

// PolicyChecker is the approvals.HostPolicy of a real deployment: the approvals
// policy, told each host's groups, and which SSH hosts can hold what it
// allows.
type PolicyChecker struct {
	Policy    *approvals.Policy
	Inventory *hosts.Inventory
	// Sandboxes, when set, finds the SSH hosts that have no sandbox for
	// the commands that run without approval while their remote_sandbox
	// is required (a *hosts.Pool): what the policy allows there needs
	// approval instead. Nil: no SSH hosts.
	Sandboxes RemoteSandboxes
}

// RemoteSandboxes says whether an SSH host lacks the sandbox its
// remote_sandbox requires; *hosts.Pool is one.
type RemoteSandboxes interface {
	// MissingSandbox is an error saying how to fix the host when it has
	// none and must, else nil; it may connect to the host.
	MissingSandbox(ctx context.Context, h hosts.Host) error
}

var (
	_ approvals.HostPolicy = PolicyChecker{}
	_ RemoteSandboxes      = (*hosts.Pool)(nil)
)

// sandboxProbeBound bounds how long a decision waits for a host to say
// which sandbox it has (a connect and one short command, once per
// connection).
const sandboxProbeBound = 30 * time.Second

// Check classifies command for host: the policy decides, and an allow on
// an SSH host that cannot sandbox it (under remote_sandbox: required)
// becomes approve, with the reason and the fix.
func (p PolicyChecker) Check(host, command string) approvals.HostDecision {
	t := approvals.Target{Host: host}
	h, known := p.Inventory.Lookup(host)
	if known {
		t.Groups = h.Groups
	}
	d := p.Policy.Check(t, command)
	hd := approvals.HostDecision{Action: d.Action, Reasons: d.Reasons, ConnectPorts: d.ConnectPorts()}
	if d.Action != approvals.Allow {
		return hd
	}
	if known && !h.IsLocal() && p.Sandboxes != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeBound)
		defer cancel()
		if err := p.Sandboxes.MissingSandbox(ctx, h); err != nil {
			return approvals.HostDecision{Action: approvals.Approve, Reasons: append([]string{err.Error()}, d.Reasons...)}
		}
	}
	hd.Hidden = p.Policy.SecretPaths()
	return hd
}

// ApprovalUse is what GateApprover needs of the store beyond the Gate: it
// finds a request to re-attach to, claims an approval for its one run, and
// records that the waiter acted on the decision (so nothing else does).
// *store.Store has it.
type ApprovalUse interface {
	ReusableApproval(ctx context.Context, sessionID int64, hash string) (approvals.Approval, bool, error)
	ConsumeApproval(ctx context.Context, id, by string) (bool, error)
	FinishFollowUp(ctx context.Context, approvalID string) (bool, error)
}

// GateApprover is the approvals.Approver of a real deployment: requests go
// through the approvals Gate, so every decision is recorded and audited,
// and each approval allows exactly one run.
type GateApprover struct {
	Gate  *approvals.Gate
	Store ApprovalUse
	// Platform names the requesters' platform ("web", "slack", "console")
	// when a session does not say: a request is the person of the
	// session's own platform, so that slack:U1 cannot approve what
	// slack:U1 asked for by passing as web:U1.
	Platform string
	// Groups gives a host's groups, for approver rules per host group.
	Groups func(host string) []string
}

var _ approvals.Approver = GateApprover{}

// Approve re-attaches to a request for exactly this command that is still
// pending or was approved and not yet used (a turn resumed after a
// restart), or opens a new one; it reports the request as pending and
// waits for its decision. The command may run only when the decision
// allows exactly this request and this call claimed it.
func (g GateApprover) Approve(ctx context.Context, req approvals.CommandRequest, pending func(approvals.Pending)) (approvals.Outcome, error) {
	// The request names the hosts the target resolved to, sorted: that is
	// what the approvers see and what the approval binds.
	hosts := slices.Sorted(slices.Values(req.Hosts))
	if len(hosts) == 0 {
		hosts = []string{req.Target}
	}
	areq := approvals.Request{Host: strings.Join(hosts, ","), Command: req.Command, Cwd: req.Cwd, Reasons: req.Reasons,
		Requester: approvals.Person{Platform: g.platform(req.Requester), ID: req.Requester.ID}, Channel: req.Channel, SessionID: req.SessionID}
	if g.Groups != nil {
		for _, h := range hosts {
			areq.HostGroups = append(areq.HostGroups, g.Groups(h)...)
		}
	}
	a, found, err := g.Store.ReusableApproval(ctx, req.SessionID, areq.Hash())
	if err != nil {
		return approvals.Outcome{}, err
	}
	if !found {
		if a, err = g.Gate.Open(ctx, areq); err != nil {
			return approvals.Outcome{}, err
		}
	}
	pending(approvals.Pending{ID: a.ID, Target: a.Host, Command: a.Command, Reasons: a.Reasons, Requester: a.Requester,
		ExpiresAt: a.ExpiresAt, Reattached: found})
	res, err := g.Gate.Wait(ctx, a.ID)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), agent.ErrShutdown) {
			// Stopped by a person: withdraw the request, so its card
			// cannot approve a run nobody waits for any more. A shutdown
			// leaves it pending, and its follow-up open, for after the
			// restart.
			g.withdraw(context.WithoutCancel(ctx), context.Cause(ctx), a.ID, areq.Requester)
		}
		return approvals.Outcome{}, err
	}
	// Said for people and the model alike: "denied by @bob", "expired:
	// nobody decided within 15 minutes" — no platform keys.
	out := approvals.Outcome{State: string(res.Outcome), DecidedBy: plainMention(res.DecidedBy)}
	if res.Outcome == approvals.ApprovalExpired || strings.HasPrefix(res.DecidedBy, "opsbot") {
		out.State, out.DecidedBy = connectors.PlainMentions(decisionText(res.Approval)), ""
	}
	if res.Allows(areq) {
		claimed, err := g.Store.ConsumeApproval(context.WithoutCancel(ctx), a.ID, areq.Requester.Key())
		if err != nil {
			return approvals.Outcome{}, err
		}
		out.Approved = claimed
		if !claimed {
			out.State = "already used"
		}
		if cl := claimsOf(ctx); claimed && cl != nil {
			// The follow-up closes when the command starts (claims.go).
			cl.add(areq.Command, a.ID)
			return out, nil
		}
	}
	// This waiter acted on the decision: the follow-up recorded for a
	// restart is done.
	if _, err := g.Store.FinishFollowUp(context.WithoutCancel(ctx), a.ID); err != nil {
		return approvals.Outcome{}, err
	}
	return out, nil
}

// withdraw denies a request whose waiter was stopped: in the name of the
// person who pressed Stop when they may deny it, else of the requester
// (who may always withdraw their own request).
func (g GateApprover) withdraw(ctx context.Context, cause error, id string, requester approvals.Person) {
	var by stoppedBy
	if errors.As(cause, &by) && by.Person.ID != "" {
		if res, err := g.Gate.Vote(ctx, id, by.Person, approvals.VoteDeny); err == nil && res.Status != approvals.VoteRefused {
			g.Store.FinishFollowUp(ctx, id)
			return
		}
	}
	g.Gate.Vote(ctx, id, requester, approvals.VoteDeny)
	g.Store.FinishFollowUp(ctx, id)
}

// platform is the requester's platform: the session's own, else the
// configured one.
func (g GateApprover) platform(who approvals.Person) string {
	if who.Platform != "" {
		return who.Platform
	}
	return g.Platform
}
