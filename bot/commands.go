package bot

import (
	"strconv"
	"strings"
)

const helpText = "I investigate your hosts and answer here. Mention me with a question, or a command:\n" +
	"• `run <target> <command>` — run a command (target: a host, `group:NAME`, or a comma list); risky ones wait for approval\n" +
	"   `run --timeout 5m <target> <command>` — allow it longer than the default · `run --bg <target> <command>` — run it as a background job\n" +
	"• `jobs` — this thread's background jobs · `job <id>` — one job\n" +
	"• `cancel` — stop the running answer · `cancel <job id>` — stop a job\n" +
	"• `hosts` — the hosts I can reach\n" +
	"• `approvals` — the commands waiting for approval in this channel, who may approve them and when they expire, and this thread's approved similar commands · `approvals revoke N` — end one\n" +
	"• `health` — the scheduled health checks and their last results · `health <name>` — run one now, into this thread\n" +
	"• `reset` — forget this thread's conversation\n" +
	"• `summarize` — this thread's status: asked, found, done, open · `postmortem` — its postmortem, from the record\n" +
	"• `help` — this text"

// isStop reports whether a message asks to stop the running turn; it is
// handled at once, not queued behind the turn it wants to stop.
func isStop(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	return t == "cancel" || t == "stop"
}

// commandLine reports whether word and rest have a chat command's shape:
// help, jobs, hosts, approvals and reset alone, job and cancel with an id, health
// with at most a schedule's name. With the agent on, anything else that
// begins with a command's word ("help me read this log", "reset the
// nginx service") is a question for it, not a command.
func commandLine(word, rest string) bool {
	switch strings.ToLower(word) {
	case "", "help", "jobs", "hosts", "reset", "summarize", "postmortem":
		return rest == ""
	case "approvals":
		return true // any form: a wrong one gets its usage (grants.go)
	case "job", "cancel":
		_, err := strconv.ParseInt(strings.TrimPrefix(rest, "#"), 10, 64)
		return err == nil
	case "health":
		return !strings.ContainsAny(rest, " \t\n")
	}
	return false
}

func firstWord(s string) (string, string) {
	s = strings.TrimSpace(s)
	w, rest, _ := strings.Cut(s, " ")
	return w, strings.TrimSpace(rest)
}
