package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
)

const helpText = "I investigate your hosts and answer here. Mention me with a question, or a command:\n" +
	"• `run <target> <command>` — run a command (target: a host, `group:NAME`, or a comma list); risky ones wait for approval\n" +
	"   `run --timeout 5m <target> <command>` — allow it longer than the default · `run --bg <target> <command>` — run it as a background job\n" +
	"• `jobs` — this thread's background jobs · `job <id>` — one job\n" +
	"• `cancel` — stop the running answer · `cancel <job id>` — stop a job\n" +
	"• `hosts` — the hosts I can reach\n" +
	"• `health` — the scheduled health checks and their last results · `health <name>` — run one now, into this thread\n" +
	"• `reset` — forget this thread's conversation\n" +
	"• `help` — this text"

// isStop reports whether a message asks to stop the running turn; it is
// handled at once, not queued behind the turn it wants to stop.
func isStop(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	return t == "cancel" || t == "stop"
}

// process handles one queued message.
func (b *Bot) process(ctx context.Context, id threadID, q queued) {
	ev := q.ev
	sess, err := b.session(ctx, ev)
	if err != nil {
		b.internalError(ctx, ev, err)
		return
	}
	if q.followUp != "" {
		b.followUp(ctx, ev, sess, q.followUp)
		return
	}
	if ev.Question {
		b.turn(ctx, ev, sess)
		return
	}
	word, rest := firstWord(ev.Text)
	switch strings.ToLower(word) {
	case "help", "":
		b.reply(ctx, ev, helpText)
	case "run":
		b.runCommand(ctx, ev, sess, rest)
	case "jobs":
		b.listJobs(ctx, ev, sess)
	case "job":
		b.showJob(ctx, ev, sess, rest)
	case "cancel":
		b.cancelJob(ctx, ev, sess, rest)
	case "hosts":
		b.listHosts(ctx, ev)
	case "health":
		b.health(ctx, ev, rest)
	case "reset":
		if _, err := b.Store.DeleteMessagesAfter(ctx, sess.ID, 0); err != nil {
			b.internalError(ctx, ev, err)
			return
		}
		b.reply(ctx, ev, "Done: this thread's conversation is forgotten (the audit trail keeps what was run).")
	default:
		b.turn(ctx, ev, sess)
	}
}

func firstWord(s string) (string, string) {
	s = strings.TrimSpace(s)
	w, rest, _ := strings.Cut(s, " ")
	return w, strings.TrimSpace(rest)
}

func (b *Bot) listJobs(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	jobs, err := b.Store.Jobs(ctx, sess.ID, 20)
	if err != nil {
		b.internalError(ctx, ev, err)
		return
	}
	if len(jobs) == 0 {
		b.reply(ctx, ev, "No background jobs in this thread.")
		return
	}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, "• "+strings.SplitN(agent.FormatJob(j), "\n", 2)[0])
	}
	b.reply(ctx, ev, strings.Join(lines, "\n"))
}

func (b *Bot) showJob(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		b.reply(ctx, ev, "Usage: `job <id>`, e.g. `job 7` (see `jobs`).")
		return
	}
	j, err := b.Store.Job(ctx, id)
	if err != nil || j.SessionID != sess.ID {
		// Another thread's job is not this thread's business (its channel
		// may be closed to this user).
		b.reply(ctx, ev, fmt.Sprintf("This thread has no job %d; `jobs` lists this thread's jobs.", id))
		return
	}
	text := agent.FormatJob(j)
	if head, tail, ok := strings.Cut(text, "\n"); ok {
		// The kept tail can be longer than a message holds: its end
		// shows, as with any output.
		out := &outputTail{limit: max(b.maxText(ev)-chars(head)-outputMargin, 200)}
		out.Write(tail)
		text = head + "\n" + out.View()
	}
	b.reply(ctx, ev, text)
}

func (b *Bot) cancelJob(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		b.reply(ctx, ev, "Usage: `cancel` stops the running answer; `cancel <job id>` stops a job.")
		return
	}
	j, err := b.Store.Job(ctx, id)
	if err != nil || j.SessionID != sess.ID {
		b.reply(ctx, ev, fmt.Sprintf("This thread has no job %d; `jobs` lists this thread's jobs.", id))
		return
	}
	if j.Requester != "" && j.Requester != ev.User.ID && !b.isApprover(ev) {
		b.reply(ctx, ev, fmt.Sprintf("Not cancelled: only %s, who started job %d, or an approver may cancel it.", connectors.Mention(j.Requester), id))
		return
	}
	if b.Jobs == nil || !b.Jobs.Cancel(id) {
		b.reply(ctx, ev, fmt.Sprintf("Job %d is not running.", id))
		return
	}
	b.reply(ctx, ev, fmt.Sprintf("Cancelling job %d; its end will be reported here.", id))
}

func (b *Bot) listHosts(ctx context.Context, ev connectors.Event) {
	var lines []string
	for _, h := range b.Hosts {
		line := "• `" + h.Name + "`"
		if len(h.Groups) > 0 {
			line += " — groups: " + strings.Join(h.Groups, ", ")
		}
		lines = append(lines, line)
	}
	b.reply(ctx, ev, "Hosts:\n"+strings.Join(lines, "\n"))
}

// internalError logs err with an id and tells the thread only the id.
func (b *Bot) internalError(ctx context.Context, ev connectors.Event, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	id := errorID()
	b.log().Error("internal error", "id", id, "err", err)
	b.reply(ctx, ev, "Internal error (id "+id+"); the operator's log has the details.")
}

// errorID names one logged error for the person who saw it fail.
func errorID() string { return strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36) }

// maxText is the most text one message holds on the event's platform.
func (b *Bot) maxText(ev connectors.Event) int {
	if c, ok := b.conn(ev.Platform); ok && c.Limits().MaxText > 0 {
		return c.Limits().MaxText
	}
	return 3000
}
