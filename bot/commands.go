package bot

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

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
		b.followUps().act(ctx, ev, sess, q.followUp)
		return
	}
	b.followUps().first(ctx, ev, sess)
	if ev.Question {
		b.answers().turn(ctx, ev, sess)
		return
	}
	word, rest := firstWord(ev.Text)
	switch strings.ToLower(word) {
	case "run":
		b.runner().command(ctx, ev, sess, rest)
	default:
		if b.Agent != nil && !commandLine(word, rest) {
			b.answers().turn(ctx, ev, sess) // "help me read this log" is a question
			return
		}
		if !b.commands().answer(ctx, ev, sess, word, rest) {
			b.answers().turn(ctx, ev, sess)
		}
	}
}

// commandLine reports whether word and rest have a chat command's shape:
// help, jobs, hosts and reset alone, job and cancel with an id, health
// with at most a schedule's name. With the agent on, anything else that
// begins with a command's word ("help me read this log", "reset the
// nginx service") is a question for it, not a command.
func commandLine(word, rest string) bool {
	switch strings.ToLower(word) {
	case "", "help", "jobs", "hosts", "reset":
		return rest == ""
	case "job", "cancel":
		_, err := strconv.ParseInt(strings.TrimPrefix(rest, "#"), 10, 64)
		return err == nil
	case "health":
		return !strings.ContainsAny(rest, " \t\n")
	}
	return false
}

// commands are the chat commands about the thread, its jobs and the
// hosts, answering through b.
func (b *Bot) commands() *commands {
	c := &commands{store: b.Store, hosts: b.Hosts, checks: b.Health, out: b, log: b.log(), mayApprove: b.isApprover}
	if b.Jobs != nil {
		c.jobs = b.Jobs
	}
	return c
}

// runner answers `run` through b's guard, executor and jobs.
func (b *Bot) runner() *runner {
	rn := &runner{guard: b.Guard, claims: b.Store, turns: b.answers(), refreshCards: b.cards().refresh,
		timeout: b.Config.WithDefaults().RunTimeout, log: b.log()}
	if b.Guard != nil {
		rn.exec = b.Guard.Exec
	}
	if b.Jobs != nil {
		rn.jobs = b.Jobs
	}
	return rn
}

// answers runs agent turns through b: its agent, streams and cards.
func (b *Bot) answers() *answers {
	an := &answers{answerOut: b, noAgentHelp: b.NoAgentHelp, store: b.Store, cards: b.cards(), metrics: b.Metrics, log: b.log()}
	if b.Agent != nil {
		an.agent = b.Agent
	}
	return an
}

func firstWord(s string) (string, string) {
	s = strings.TrimSpace(s)
	w, rest, _ := strings.Cut(s, " ")
	return w, strings.TrimSpace(rest)
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
