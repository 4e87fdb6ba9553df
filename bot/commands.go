package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
)

const helpText = "I investigate your hosts and answer here. Mention me with a question, or a command:\n" +
	"• `run <target> <command>` — run a command (target: a host, `group:NAME`, or a comma list); risky ones wait for approval\n" +
	"• `jobs` — this thread's background jobs · `job <id>` — one job\n" +
	"• `cancel` — stop the running answer · `cancel <job id>` — stop a job\n" +
	"• `hosts` — the hosts I can reach\n" +
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
	if q.resume {
		b.resume(ctx, ev, sess)
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

// runCommand is `run <target> <command>`: through the policy and, when it
// says so, an approval; the output streams into the thread.
func (b *Bot) runCommand(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, args string) {
	target, command := firstWord(args)
	if target == "" || command == "" {
		b.reply(ctx, ev, "Usage: `run <target> <command>`, e.g. `run web-1 df -h` or `run group:web uptime`.")
		return
	}
	r, done := b.renderer(ev, true)
	defer done()
	call := agent.ToolCall{ID: "chat", Name: "run", Session: sess, Emit: b.emitter(ctx, ev, r)}
	hosts, err := b.Guard.Authorize(ctx, call, target, command, sess.Cwd)
	if err != nil {
		b.finishTurn(ctx, ev, r, err)
		return
	}
	b.refreshCards(ctx, ev)
	r.Status(fmt.Sprintf("running `%s` on %s…", command, target), false)
	var mu sync.Mutex
	opened, nl := false, true
	results := b.Guard.Exec.Exec(ctx, hosts, command, agent.ExecOptions{Timeout: time.Minute, Dir: sess.Cwd,
		OnOutput: func(host string, _ bool, data []byte) {
			mu.Lock()
			defer mu.Unlock()
			if !opened {
				r.Write("```\n")
				opened = true
			}
			out := string(data)
			if len(hosts) > 1 {
				out = prefixLines(host, out)
			}
			if out != "" {
				r.Write(out)
				nl = strings.HasSuffix(out, "\n")
			}
		}})
	if opened {
		if !nl {
			r.Write("\n")
		}
		r.Write("```")
	} else {
		r.Write("_(no output)_")
	}
	r.Status(summarize(command, target, results), true)
	r.Close(ctx, nil)
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

func summarize(command, target string, results []agent.ExecResult) string {
	if len(results) == 1 {
		r := results[0]
		if r.Err != nil {
			return fmt.Sprintf("✗ `%s` on %s: %v", command, r.Host, r.Err)
		}
		mark := "✓"
		if r.ExitCode != 0 || r.Killed {
			mark = "✗"
		}
		return fmt.Sprintf("%s `%s` on %s: exit %d in %s", mark, command, r.Host, r.ExitCode, r.Duration.Round(time.Millisecond))
	}
	failed := 0
	for _, r := range results {
		if r.Err != nil || r.ExitCode != 0 || r.Killed {
			failed++
		}
	}
	return fmt.Sprintf("`%s` on %s: %d hosts, %d failed", command, target, len(results), failed)
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
		text = head + "\n```\n" + tail + "\n```"
	}
	b.reply(ctx, ev, text)
}

func (b *Bot) cancelJob(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil {
		b.reply(ctx, ev, "Usage: `cancel` stops the running answer; `cancel <job id>` stops a job.")
		return
	}
	if j, err := b.Store.Job(ctx, id); err != nil || j.SessionID != sess.ID {
		b.reply(ctx, ev, fmt.Sprintf("This thread has no job %d; `jobs` lists this thread's jobs.", id))
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
	id := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
	b.log().Error("internal error", "id", id, "err", err)
	b.reply(ctx, ev, "Internal error (id "+id+"); the operator's log has the details.")
}
