package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// runUsage answers a `run` the bot cannot read.
const runUsage = "Usage: `run [--timeout 5m] [--bg] <target> <command>`, e.g. `run web-1 df -h`, `run --timeout 10m group:web apt-get update` or `run --bg db-1 pg_dump app`."

// maxRunTimeout bounds `run --timeout`: longer work is a background job.
const maxRunTimeout = 24 * time.Hour

// runSpec is one chat `run`: what to run where, and how.
type runSpec struct {
	Target     string
	Command    string
	Timeout    time.Duration // 0: the configured default
	Background bool          // a job, listed by `jobs`
	// Confinement is how the Guard let it run (sandboxed unless approved).
	Confinement hosts.Confinement
}

// parseRun reads `[--timeout D] [--bg] <target> <command>`; problem is
// the answer to show when it cannot.
func parseRun(args string) (s runSpec, problem string) {
	for {
		w, rest := firstWord(args)
		switch {
		case w == "--bg" || w == "--background":
			s.Background, args = true, rest
			continue
		case w == "--timeout" || strings.HasPrefix(w, "--timeout="):
			val, after := strings.TrimPrefix(w, "--timeout="), rest
			if w == "--timeout" {
				val, after = firstWord(rest)
			}
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 || d > maxRunTimeout {
				return s, fmt.Sprintf("`--timeout` wants a duration like 90s, 5m or 2h (at most 24h), not %q. %s", val, runUsage)
			}
			s.Timeout, args = d, after
			continue
		case strings.HasPrefix(w, "--"):
			return s, fmt.Sprintf("`run` has no option %s. %s", w, runUsage)
		}
		break
	}
	s.Target, s.Command = firstWord(args)
	if s.Target == "" || s.Command == "" {
		return s, runUsage
	}
	return s, ""
}

// runner answers the chat command `run`: the command goes through the
// guard (the policy and, when it says so, an approval), then its output
// streams into the thread, or background jobs start.
type runner struct {
	// guard authorizes a command on a target (approvals.Guard does); exec
	// runs it on hosts (the guard's executor).
	guard tools.Permitter
	exec  func(ctx context.Context, hosts []string, command string, opts hosts.ExecOptions) []hosts.ExecResult
	// startJob starts a background job (hosts.Jobs.Start); nil when they
	// are off.
	startJob func(ctx context.Context, job hosts.Job, dir string, c hosts.Confinement) (hosts.Job, error)
	claims   FollowUpFinisher
	turns    runTurns
	// refreshCards shows the decision on the thread's decided cards.
	refreshCards func(ctx context.Context, ev connectors.Event)
	// timeout bounds a run without --timeout.
	timeout time.Duration
	log     *slog.Logger
}

// runTurns is what a run shows in its thread with: a stream, the agent
// events of its approval, the end of a refused run, and plain replies.
type runTurns interface {
	renderer(ctx context.Context, ev connectors.Event, withStop bool) (*render.Renderer, func())
	emitter(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, r *render.Renderer, spec *runSpec, ran *ranList) func(agent.Event)
	closeRefused(ctx context.Context, ev connectors.Event, r *render.Renderer, err error)
	reply(ctx context.Context, ev connectors.Event, text string)
}

var (
	_ tools.Permitter = (*approvals.Guard)(nil)
)

// command is `run`: through the policy and, when it says so, an
// approval; the output streams into the thread, or a job starts. A
// person mentioned in the command is the plain @name a reader sees: the
// policy judges, and the shell runs, no connector's placeholder.
func (rn *runner) command(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, args string) {
	spec, problem := parseRun(connectors.PlainMentions(args))
	if problem != "" {
		rn.turns.reply(ctx, ev, problem)
		return
	}
	if spec.Timeout == 0 {
		spec.Timeout = rn.timeout
	}
	r, done := rn.turns.renderer(ctx, ev, true)
	defer done()
	call := agent.ToolCall{ID: "chat", Name: "run", Session: sess, Emit: rn.turns.emitter(ctx, ev, sess, r, &spec, nil)}
	permit, err := tools.Authorize(ctx, rn.guard, call, spec.Target, spec.Command, sess.Cwd)
	if err != nil {
		rn.turns.closeRefused(ctx, ev, r, err)
		return
	}
	spec.Confinement = permit.Confinement
	rn.refreshCards(ctx, ev)
	rn.execute(ctx, r, sess, permit.Hosts, spec)
}

// approved runs a `run` whose approval was decided while nobody waited for
// it, saying first how it was decided (note).
func (rn *runner) approved(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, note string, hosts []string, spec runSpec) {
	r, done := rn.turns.renderer(ctx, ev, true)
	defer done()
	r.Status(note, false)
	rn.execute(ctx, r, sess, hosts, spec)
}

// execute runs an authorized `run` and shows how it went, then closes r.
func (rn *runner) execute(ctx context.Context, r *render.Renderer, sess agent.SessionInfo, names []string, spec runSpec) {
	if spec.Background {
		rn.startJobs(ctx, r, sess, names, spec)
		return
	}
	r.Status(fmt.Sprintf("running `%s` on %s…", spec.Command, spec.Target), false)
	// One message shows the output; past what it holds, its end: the
	// newest lines are what a person looks for.
	out := &outputTail{limit: max(r.MaxText()-outputMargin, 200)}
	var mu sync.Mutex
	opts := hosts.ExecOptions{Confinement: spec.Confinement, Timeout: spec.Timeout, Dir: sess.Cwd,
		OnOutput: func(host string, _ bool, data []byte) {
			mu.Lock()
			defer mu.Unlock()
			text := string(data)
			if len(names) > 1 {
				text = prefixLines(host, text)
			}
			if text != "" {
				out.Write(text)
				r.Replace(out.View())
			}
		}}
	if len(names) > 1 {
		opts.OnResult = hostsDone(r, &mu, out, spec, len(names))
	}
	results := rn.exec(ctx, names, spec.Command, opts)
	mu.Lock()
	r.Replace(out.View())
	mu.Unlock()
	summary := summarize(spec, results)
	if ctx.Err() != nil {
		// Not "context canceled": who stopped it, or the restart.
		summary = fmt.Sprintf("⏹ `%s` on %s: %s", spec.Command, spec.Target, stopReason(ctx))
	}
	r.Status(summary, true)
	// The command ran, or failed to start and said so: its approval is
	// used either way.
	settleApproval(ctx, rn.claims, spec.Confinement.Approval)
	r.Close(context.WithoutCancel(ctx), nil)
}

// hostsDone shows each host's result of a run on several hosts as soon
// as that host is done, and how many are done: a host that froze (held
// to the command's deadline plus one keepalive's wait) does not hide the
// others' results until it ends (issue 28 item 7).
func hostsDone(r *render.Renderer, mu *sync.Mutex, out *outputTail, spec runSpec, total int) func(hosts.ExecResult) {
	done := 0
	return func(res hosts.ExecResult) {
		mu.Lock()
		defer mu.Unlock()
		done++
		line := fmt.Sprintf("%s: ✓ exit 0 in %s\n", res.Host, res.Duration.Round(time.Millisecond))
		if why := hostFailure(res, spec.Timeout); why != "" {
			line = fmt.Sprintf("%s: ✗ %s\n", res.Host, why)
		}
		out.Write(line)
		r.Replace(out.View())
		r.Status(fmt.Sprintf("running `%s` on %s… %d of %d hosts done", spec.Command, spec.Target, done, total), false)
	}
}

// startJobs starts one background job per host; `jobs` lists them and
// each reports its end in the thread.
func (rn *runner) startJobs(ctx context.Context, r *render.Renderer, sess agent.SessionInfo, names []string, spec runSpec) {
	var lines []string
	for _, h := range names {
		if rn.startJob == nil {
			lines = append(lines, fmt.Sprintf("✗ `%s` on %s: background jobs are off here", spec.Command, h))
			continue
		}
		job, err := rn.startJob(ctx, hosts.Job{SessionID: sess.ID, Host: h, Command: spec.Command, Requester: sess.Requester}, sess.Cwd, spec.Confinement)
		if err != nil {
			rn.log.Error("start job", "host", h, "err", err)
			why := "opsbot is shutting down, or see the operator's log"
			if u := (*store.Unavailable)(nil); errors.As(err, &u) {
				why = u.Error() // its row could not be written: it did not run
			}
			lines = append(lines, fmt.Sprintf("✗ `%s` on %s: the job could not start (%s)", spec.Command, h, why))
			continue
		}
		lines = append(lines, fmt.Sprintf("▶ job %d started: `%s` on %s — `job %d` shows it, `cancel %d` stops it; its end is reported here", job.ID, spec.Command, h, job.ID, job.ID))
	}
	// A job's row records that it started: its approval is used.
	settleApproval(ctx, rn.claims, spec.Confinement.Approval)
	r.Write(strings.Join(lines, "\n"))
	r.Close(context.WithoutCancel(ctx), nil)
}

// stopReason says why ctx ended, for people.
func stopReason(ctx context.Context) string {
	var by approvals.StoppedBy
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &by):
		return by.Error()
	case errors.Is(cause, agent.ErrShutdown):
		return "interrupted: opsbot restarted"
	}
	return "stopped"
}

// outputMargin is room in a message for the output's fences and its note.
const outputMargin = 160

// outputTail keeps the end of a command's output that fits one message,
// and counts what it cut.
type outputTail struct {
	// limit is in characters, as platforms count a message's length.
	limit    int
	tail     string
	cutLines int // whole lines no longer kept
	lines    int // lines seen
}

// Write adds output.
func (o *outputTail) Write(s string) {
	o.lines += strings.Count(s, "\n")
	o.tail += s
	if len(o.tail) <= o.limit {
		return // no more bytes than the limit: no more characters either
	}
	if over := render.Chars(o.tail) - o.limit; over > 0 {
		cut := render.ByteOffset(o.tail, over)
		// Start at a line: a partial first line reads as garbage.
		if nl := strings.IndexByte(o.tail[cut:], '\n'); o.tail[cut-1] != '\n' && nl >= 0 && nl < len(o.tail)-cut-1 {
			cut += nl + 1
		}
		for cut < len(o.tail) && !utf8.RuneStart(o.tail[cut]) {
			cut++
		}
		o.cutLines += strings.Count(o.tail[:cut], "\n")
		o.tail = o.tail[cut:]
	}
}

// View is the message: the output in a code block whose fence outlasts any
// backticks in it, after a note when the beginning was cut.
func (o *outputTail) View() string {
	if o.tail == "" && o.cutLines == 0 {
		return "_(no output)_"
	}
	var b strings.Builder
	if o.cutLines > 0 {
		shown := o.lines - o.cutLines
		if !strings.HasSuffix(o.tail, "\n") {
			shown++
		}
		fmt.Fprintf(&b, "_… the first %d lines are cut; the last %d follow._\n", o.cutLines, shown)
	}
	fence := strings.Repeat("`", max(3, longestRun(o.tail, '`')+1))
	b.WriteString(fence + "\n" + o.tail)
	if !strings.HasSuffix(o.tail, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(fence)
	return b.String()
}

// prefixLines marks each line of a host's output with the host's name.
func prefixLines(host, s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(host + ": " + l)
		}
	}
	return b.String()
}

func summarize(spec runSpec, results []hosts.ExecResult) string {
	command, target := spec.Command, spec.Target
	if len(results) == 1 {
		r := results[0]
		if r.Err != nil {
			return fmt.Sprintf("✗ `%s` on %s: could not run: %s", command, r.Host, hosts.Reason(r.Err))
		}
		if r.Killed {
			// Killed without an error is the command's own deadline (a
			// person's Stop ends with context.Canceled in Err).
			return fmt.Sprintf("✗ `%s` on %s: stopped at its deadline of %s (`run --timeout` sets a longer one)", command, r.Host, spec.Timeout)
		}
		mark := "✓"
		if r.ExitCode != 0 {
			mark = "✗"
		}
		return fmt.Sprintf("%s `%s` on %s: exit %d in %s", mark, command, r.Host, r.ExitCode, r.Duration.Round(time.Millisecond))
	}
	var failed []string
	for _, r := range results {
		if why := hostFailure(r, spec.Timeout); why != "" {
			failed = append(failed, r.Host+": "+why)
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("✓ `%s` on %s: %d hosts, all exit 0", command, target, len(results))
	}
	// Name the hosts that failed and why: "1 failed" alone sends a person
	// scrolling through every host's output to find it.
	const shown = 5
	list := strings.Join(failed[:min(len(failed), shown)], "; ")
	if len(failed) > shown {
		list += fmt.Sprintf("; and %d more", len(failed)-shown)
	}
	return fmt.Sprintf("✗ `%s` on %s: %d hosts, %d failed — %s", command, target, len(results), len(failed), list)
}

// hostFailure says how a host's run failed, or "" when it succeeded.
func hostFailure(r hosts.ExecResult, timeout time.Duration) string {
	switch {
	case r.Err != nil:
		return "could not run: " + hosts.Reason(r.Err)
	case r.Killed:
		return fmt.Sprintf("stopped at its deadline of %s", timeout)
	case r.Signal != "":
		return "killed by " + r.Signal
	case r.ExitCode != 0:
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
	return ""
}

// followUpOf is what to record for a request the thread waits on: a chat
// `run` when spec is set, else an agent's tool call.
func followUpOf(sess agent.SessionInfo, p *agent.PendingApproval, spec *runSpec) store.FollowUp {
	f := store.FollowUp{ApprovalID: p.ID, SessionID: sess.ID, Kind: store.FollowUpAgent, Requester: p.Requester, Command: p.Command}
	if spec != nil {
		f.Kind, f.Target, f.Hosts, f.Cwd = store.FollowUpRun, spec.Target, strings.Split(p.Target, ","), sess.Cwd
		f.Timeout, f.Background = spec.Timeout, spec.Background
	}
	return f
}
