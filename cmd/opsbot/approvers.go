package main

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/opsbot/opsbot/approvals"
)

// webAnyoneRule is the approvers entry of a chat only this machine can
// reach: anyone on it may approve someone else's request.
var webAnyoneRule = approvals.ApproverConfig{Web: approvals.UserList{Users: []string{"*"}}}

// webGateConfig is the approvals config for the web chat. When the chat
// can only be reached from this machine (loopback listener, no API key)
// and the config names no web approver, the embedded default's rule
// applies: anyone on the chat may approve someone else's request. Without
// it such a config would make every request expire unanswered. The bool
// says the rule was added, for the start-up log.
func webGateConfig(cfg *Config) (approvals.GateConfig, bool) {
	c := cfg.Approvals
	if !webLocalOnly(cfg) || webApprovers(c) > 0 || hasWebWildcard(c) {
		return c, false
	}
	c.Approvers = append(append([]approvals.ApproverConfig(nil), c.Approvers...), webAnyoneRule)
	return c, true
}

// webLocalOnly reports whether only this machine can reach the web chat:
// no key or signing-in proxy lets anyone else in.
func webLocalOnly(cfg *Config) bool {
	return !cfg.Web.Authenticates() && loopbackListen(cfg.Web.Listen)
}

// loopbackListen reports whether a listen address is loopback only.
func loopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.IsLoopback()
}

// webApprovers counts the web users the approvers entries name ("*"
// included).
func webApprovers(c approvals.GateConfig) int {
	n := 0
	for _, a := range c.Approvers {
		n += len(a.Web.Users)
	}
	return n
}

func hasWebWildcard(c approvals.GateConfig) bool {
	for _, a := range c.Approvers {
		for _, u := range a.Web.Users {
			if u == "*" {
				return true
			}
		}
	}
	return false
}

// approvalWarnings are the ways a valid config still makes approval
// impossible on a platform that is on (the web chat is always on; the
// terminal's user always approves at the terminal). Each names the key to
// add or change.
func (c *Config) approvalWarnings() []*ConfigError {
	gate, _ := webGateConfig(c)
	gate = gate.WithDefaults()
	var out []*ConfigError
	n := webApprovers(gate)
	switch {
	case n == 0:
		why := fmt.Sprintf("web.listen %s can be reached from other machines", c.Web.Listen)
		switch {
		case c.Web.APIKey != "":
			why = "web.api_key is set, so the chat is open to other machines"
		case c.Web.Authenticates():
			why = "web.users or web.trusted_proxies is set, so the chat is open to other machines"
		}
		out = append(out, c.warning("approvals.approvers", fmt.Sprintf(
			"nobody can approve a command asked for in the web chat (%s, and no approver names a web user), "+
				"so every request there expires unanswered: add an entry with web.users, e.g.\n"+
				"    approvals:\n      approvers:\n        - web:\n            users: [alice, bob]", why)))
	case !hasWebWildcard(gate) && n < gate.Quorum:
		out = append(out, c.warning("approvals.quorum", fmt.Sprintf(
			"%d approvals are needed but the approvers name only %d web user(s), so no request made in the web chat can be approved: "+
				"lower approvals.quorum or add users to approvals.approvers[].web.users", gate.Quorum, n)))
	}
	return append(out, c.chatApproverWarnings(gate)...)
}

// chatApproverWarnings: Slack or Discord on, and no approver names anyone
// there, so every request made there expires unanswered.
func (c *Config) chatApproverWarnings(gate approvals.GateConfig) []*ConfigError {
	var slack, discord bool
	for _, a := range gate.Approvers {
		slack = slack || len(a.Slack.Users)+len(a.Slack.UserGroups) > 0
		discord = discord || len(a.Discord.Users)+len(a.Discord.Roles) > 0
	}
	var out []*ConfigError
	if c.Slack.Enabled() && !slack {
		out = append(out, c.warning("approvals.approvers", "Slack is on, but no approver names a Slack user or user group, "+
			"so every request made in Slack expires unanswered: add an entry, e.g.\n"+
			"    approvals:\n      approvers:\n        - slack:\n            users: [U012ABCDEF]       # profile → ⋮ → Copy member ID\n"+
			"            user_groups: [S012ABCDEF] # opsbot slack groups lists them"))
	}
	if c.Discord.Enabled() && !discord {
		out = append(out, c.warning("approvals.approvers", "Discord is on, but no approver names a Discord user or role, "+
			"so every request made in Discord expires unanswered: add an entry, e.g.\n"+
			"    approvals:\n      approvers:\n        - discord:\n            roles: [\"123456789012345678\"] # Server Settings → Roles → ⋯ → Copy Role ID (Developer Mode on)"))
	}
	return out
}

// warning is a ConfigError about key that does not stop the config from
// loading.
func (c *Config) warning(key, msg string) *ConfigError {
	return c.problem(key, "warning: "+msg)
}
