package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/policy"
)

// policyPrompt is the system prompt's "Command policy" section, derived
// from the configured policy and the approvals in force (g: the config
// with the rules the composition root adds, as the gate has it): what runs at once, the rules,
// what is always refused, and who approves where within how long. It says
// what the code does, so the model can explain to people why a command
// waits.
func policyPrompt(p policy.PolicyConfig, g approvals.GateConfig) string {
	var b strings.Builder
	b.WriteString("Runs at once: read-only commands the policy knows (ls, cat, grep, tail, df, free, ps, ss, uptime, " +
		"journalctl, systemctl status, docker ps, kubectl get, …), with read-only arguments only.\n")
	if len(p.Allow) > 0 {
		fmt.Fprintf(&b, "Also runs at once, with any arguments: %s.\n", strings.Join(p.Allow, ", "))
	}
	if len(p.Remove) > 0 {
		fmt.Fprintf(&b, "Not treated as read-only here: %s.\n", strings.Join(p.Remove, ", "))
	}
	for _, r := range p.Rules {
		b.WriteString(ruleLine(r))
	}
	fmt.Fprintf(&b, "Anything else: %s.\n", actionWords(p.Default))
	fmt.Fprintf(&b, "Always refused, whatever anyone approves: %s.\n", strings.Join(policy.AlwaysRefused, "; "))
	b.WriteString(secretsLine(p))
	b.WriteString(egressLine(p))
	b.WriteString(sandboxLine)
	b.WriteString(approversLine(g))
	b.WriteString(plansLine)
	return b.String()
}

// plansLine tells the model to propose a plan, approved once, rather than
// one card per command when a task needs several approvals (issue 31).
const plansLine = "When a task needs commands that wait for approval and you have the propose_plan tool, propose them as one plan " +
	"(goal, and each step's target and exact command, with its rollback when there is one) instead of asking one card at a time: " +
	"people approve it once and opsbot runs exactly those steps in order, stopping at the first failure; you are told every step's result after the plan ends. " +
	"Do not run a plan's commands yourself; a command outside the approved plan (another flag, host or step) waits for its own approval.\n"

// secretsLine says that reading a secret path waits for approval, naming
// the configured ones and a few of the built-in.
func secretsLine(p policy.PolicyConfig) string {
	builtIn := []string{"/etc/shadow", "id_ed25519", "*.key", "/proc/*/environ"}
	paths := append(slices.Clone(p.SecretPaths), builtIn...)
	return fmt.Sprintf("Reading a secret file waits for approval, whatever the program: %s, opsbot's own config and database, and %d more built in.\n",
		strings.Join(paths, ", "), len(policy.DefaultSecretPaths)-len(builtIn))
}

// egressLine says where network clients may connect without a person.
func egressLine(p policy.PolicyConfig) string {
	to := "the inventory's hosts"
	if len(p.EgressAllow) > 0 {
		to += " and " + strings.Join(p.EgressAllow, ", ")
	}
	return "Network clients (curl, wget, dig, nc, ssh, …) run at once only towards " + to + "; any other destination waits for approval.\n"
}

// sandboxLine says how a command no person approved runs (hosts'
// sandboxes: Landlock and namespaces on the bot's host, bubblewrap on SSH
// hosts) and how an approved one does.
const sandboxLine = "A command that runs without approval runs confined, on the bot's host and on SSH hosts alike: files read-only except a private /tmp, " +
	"secret files hidden, no network beyond the destinations allowed above; on an SSH host without bubblewrap it is refused unless that host is set to best_effort. " +
	"An approved command runs unconfined: as opsbot's user on its own host, as the SSH user on an SSH host.\n"

// ruleLine words one configured rule.
func ruleLine(r policy.RuleConfig) string {
	cmd := r.Program
	if len(r.Args) > 0 {
		cmd += " " + strings.Join(r.Args, " ")
	}
	where := ""
	if len(r.Hosts) > 0 {
		where += " on " + strings.Join(r.Hosts, ", ")
	}
	if len(r.Groups) > 0 {
		where += " on group " + strings.Join(r.Groups, ", group ")
	}
	line := fmt.Sprintf("Rule: `%s`%s: %s", cmd, where, actionWords(r.Action))
	if r.Reason != "" {
		line += " (" + r.Reason + ")"
	}
	return line + ".\n"
}

func actionWords(action string) string {
	switch action {
	case "allow":
		return "runs at once"
	case "deny":
		return "refused"
	}
	return "waits for a person to approve it"
}

// approversLine says who approves where, how many must, and the expiry.
func approversLine(g approvals.GateConfig) string {
	expiry := g.Expiry
	if expiry <= 0 {
		expiry = 15 * time.Minute
	}
	quorum := max(g.Quorum, 1)
	var who []string
	for _, a := range g.Approvers {
		who = append(who, approverWords(a))
	}
	if len(who) == 0 {
		return "Nobody is configured to approve, so every command that needs approval is refused when its request expires.\n"
	}
	self := "the person who asked cannot approve their own request"
	if g.AllowSelfApproval {
		self = "the person who asked may approve their own request"
	}
	return fmt.Sprintf("Approval: %s needed, from %s; %s; a request nobody decides within %s is denied.\n",
		approvals.Approvals(quorum), strings.Join(who, "; or "), self, expiry)
}

func approverWords(a approvals.ApproverConfig) string {
	var people []string
	add := func(platform string, names ...[]string) {
		for _, n := range names {
			for _, x := range n {
				people = append(people, platform+" "+x)
			}
		}
	}
	add("slack", a.Slack.Users, a.Slack.UserGroups)
	add("discord", a.Discord.Users, a.Discord.Roles)
	if slices.Contains(a.Web.Users, "*") {
		people = append(people, "anyone on the web chat")
	} else {
		add("web", a.Web.Users)
	}
	add("console", a.Console.Users)
	s := strings.Join(people, ", ")
	if len(a.HostGroups) > 0 || len(a.Hosts) > 0 {
		s += " for " + strings.Join(append(prefixed("group ", a.HostGroups), a.Hosts...), ", ")
	}
	if len(a.Channels) > 0 {
		s += " in channels " + strings.Join(a.Channels, ", ")
	}
	return s
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
