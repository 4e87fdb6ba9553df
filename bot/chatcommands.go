package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// commands answers the deterministic chat commands about a thread, its
// background jobs and the hosts, without the model: help, jobs, job,
// cancel <id>, hosts, health, reset. (`run` acts through the bot's
// renderer and approval cards.)
type commands struct {
	jobRecords jobRecords
	// forget forgets a session's conversation after seq (the store's
	// DeleteMessagesAfter).
	forget func(ctx context.Context, sessionID, seq int64) (int64, error)
	// cancel stops a running job and reports whether one ran; nil when
	// there are none to cancel.
	cancel func(id int64) bool
	hosts  []agent.HostInfo
	// checks are the scheduled health checks; nil when none are.
	checks Health
	out    poster
	log    *slog.Logger
	// mayApprove reports whether the person of ev may approve commands
	// in its channel: they may cancel anyone's job.
	mayApprove func(ev connectors.Event) bool
	// pending lists the requests waiting for approval and their votes;
	// nil when nobody can approve (no gate).
	pending pendingApprovals
	// whoMay says who may approve a request (the gate's WhoMayApprove).
	whoMay func(approvals.Approval) string
	// now is the clock of expiry times (time.Now when nil).
	now func() time.Time
	// grants are the threads' scoped grants; nil when there are none.
	grants grantRecords
	// memory is the incident memory `summarize` and `postmortem` read;
	// nil: they say it is off.
	memory *store.Memory
	// prose is the model that writes their prose (none: the record's).
	prose proseModel
}

// pendingApprovals is what `approvals` reads of the requests (the store's
// Approvals aggregate).
type pendingApprovals interface {
	PendingApprovals(ctx context.Context) ([]approvals.Approval, error)
	Votes(ctx context.Context, approvalID string) ([]approvals.Vote, error)
}

// jobRecords is what the chat commands read of background jobs.
type jobRecords interface {
	Jobs(ctx context.Context, sessionID int64, limit int) ([]hosts.Job, error)
	Job(ctx context.Context, id int64) (hosts.Job, error)
}

// answer answers the command word (with its argument rest) in the thread
// of ev, of session sess; it reports false when word names none of its
// commands.
func (c *commands) answer(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, word, rest string) bool {
	switch strings.ToLower(word) {
	case "help", "":
		c.out.reply(ctx, ev, helpText)
	case "jobs":
		c.listJobs(ctx, ev, sess)
	case "job":
		c.showJob(ctx, ev, sess, rest)
	case "cancel":
		c.cancelJob(ctx, ev, sess, rest)
	case "hosts":
		c.listHosts(ctx, ev)
	case "health":
		c.health(ctx, ev, rest)
	case "approvals":
		c.approvalsCommand(ctx, ev, sess, rest)
	case "reset":
		c.reset(ctx, ev, sess)
	case "summarize", "postmortem": // summarize.go
		c.answerMemory(ctx, ev, sess, strings.ToLower(word))
	default:
		return false
	}
	return true
}

func (c *commands) listJobs(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	jobs, err := c.jobRecords.Jobs(ctx, sess.ID, 20)
	if err != nil {
		internalError(ctx, c.out, c.log, ev, err)
		return
	}
	if len(jobs) == 0 {
		c.out.reply(ctx, ev, "No background jobs in this thread.")
		return
	}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, "• "+strings.SplitN(tools.FormatJob(j), "\n", 2)[0])
	}
	c.out.reply(ctx, ev, strings.Join(lines, "\n"))
}

func (c *commands) showJob(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		c.out.reply(ctx, ev, "Usage: `job <id>`, e.g. `job 7` (see `jobs`).")
		return
	}
	j, err := c.jobRecords.Job(ctx, id)
	if err != nil || j.SessionID != sess.ID {
		// Another thread's job is not this thread's business (its channel
		// may be closed to this user).
		c.out.reply(ctx, ev, fmt.Sprintf("This thread has no job %d; `jobs` lists this thread's jobs.", id))
		return
	}
	text := tools.FormatJob(j)
	if head, tail, ok := strings.Cut(text, "\n"); ok {
		// The kept tail can be longer than a message holds: its end
		// shows, as with any output.
		out := &outputTail{limit: max(maxText(c.out, ev)-render.Chars(head)-outputMargin, 200)}
		out.Write(tail)
		text = head + "\n" + out.View()
	}
	c.out.reply(ctx, ev, text)
}

func (c *commands) cancelJob(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		c.out.reply(ctx, ev, "Usage: `cancel` stops the running answer; `cancel <job id>` stops a job.")
		return
	}
	j, err := c.jobRecords.Job(ctx, id)
	if err != nil || j.SessionID != sess.ID {
		c.out.reply(ctx, ev, fmt.Sprintf("This thread has no job %d; `jobs` lists this thread's jobs.", id))
		return
	}
	if j.Requester != "" && j.Requester != ev.User.ID && !c.mayApprove(ev) {
		c.out.reply(ctx, ev, fmt.Sprintf("Not cancelled: only %s, who started job %d, or an approver may cancel it.", connectors.Mention(j.Requester), id))
		return
	}
	if c.cancel == nil || !c.cancel(id) {
		c.out.reply(ctx, ev, fmt.Sprintf("Job %d is not running.", id))
		return
	}
	c.out.reply(ctx, ev, fmt.Sprintf("Cancelling job %d; its end will be reported here.", id))
}

func (c *commands) listHosts(ctx context.Context, ev connectors.Event) {
	var lines []string
	for _, h := range c.hosts {
		line := "• `" + h.Name + "`"
		if len(h.Groups) > 0 {
			line += " — groups: " + strings.Join(h.Groups, ", ")
		}
		lines = append(lines, line)
	}
	c.out.reply(ctx, ev, "Hosts:\n"+strings.Join(lines, "\n"))
}

// reset forgets the thread's conversation; the audit trail stays.
func (c *commands) reset(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	if _, err := c.forget(ctx, sess.ID, 0); err != nil {
		internalError(ctx, c.out, c.log, ev, err)
		return
	}
	c.out.reply(ctx, ev, "Done: this thread's conversation is forgotten (the audit trail keeps what was run).")
}

// approvalsText is the first part of `approvals`: the requests of this
// channel that wait for a decision, each with who asked, who may
// approve, the votes and when it expires. Another channel's requests are
// not this one's business (it may be closed to this user), and no
// internal id shows: people approve on the card.
func (c *commands) approvalsText(ctx context.Context, ev connectors.Event) (string, error) {
	if c.pending == nil {
		return "Nothing waits for approval: nobody is configured to approve commands (approvals.approvers).", nil
	}
	all, err := c.pending.PendingApprovals(ctx)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, a := range all {
		if a.Platform != ev.Platform || a.Channel != ev.Channel {
			continue
		}
		votes, err := c.pending.Votes(ctx, a.ID)
		if err != nil {
			return "", err
		}
		lines = append(lines, c.approvalLine(a, votes))
	}
	if len(lines) == 0 {
		return "Nothing waits for approval in this channel.", nil
	}
	return "Waiting for approval in this channel:\n" + strings.Join(lines, "\n"), nil
}

// approvalLine is one pending request, in two lines.
func (c *commands) approvalLine(a approvals.Approval, votes []approvals.Vote) string {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	var yes, no []string
	for _, v := range votes {
		if v.Vote == "deny" {
			no = append(no, personMention(v.Voter))
		} else {
			yes = append(yes, personMention(v.Voter))
		}
	}
	tally := fmt.Sprintf("%d of %d approvals", len(yes), a.Quorum)
	if len(yes) > 0 {
		tally += " (" + strings.Join(yes, ", ") + ")"
	}
	if len(no) > 0 {
		tally += ", denied by " + strings.Join(no, ", ")
	}
	return fmt.Sprintf("• %s on `%s` — asked by %s\n   may approve: %s · votes: %s · expires %s",
		commandSpan(approvals.Shown(a.Command)), a.Host, personMention(a.Requester), c.whoMay(a), tally, expiresIn(a.ExpiresAt, now()))
}

// personMention mentions a stored person ("slack:U1"); opsbot's own
// actors stay words.
func personMention(key string) string {
	if _, id, ok := strings.Cut(key, ":"); ok && !strings.HasPrefix(key, "opsbot") {
		return connectors.Mention(id)
	}
	return key
}

// commandSpan shows a command as inline code, made visible and cut to a
// line's worth; one with a backtick or a line break as a code block.
func commandSpan(command string) string {
	d := policy.RenderCommand(command, policy.DisplayOptions{Limit: 200})
	if strings.ContainsAny(d.Preview, "`\n") {
		return "\n```\n" + d.Preview + "\n```\n  "
	}
	return "`" + d.Preview + "`"
}

// expiresIn says when a request expires: "in 12 minutes", or "now" for
// one past its time that the next sweep expires.
func expiresIn(at, now time.Time) string {
	d := at.Sub(now)
	if d <= 0 {
		return "now"
	}
	if d >= time.Minute {
		d = d.Round(time.Minute)
	}
	return "in " + approvals.HumanDuration(d)
}
