package main

import (
	"fmt"
	"regexp"
)

// Approver ids are checked by their platform's shape: a Slack approver
// written "@alice" or a Discord role written "oncall" names nobody, and
// every request would expire unanswered. Each message says where to find
// the id.
var (
	slackUserID  = regexp.MustCompile(`^[UW][A-Z0-9]+$`)
	slackGroupID = regexp.MustCompile(`^S[A-Z0-9]+$`)
	snowflake    = regexp.MustCompile(`^[0-9]{17,20}$`)
)

const (
	findSlackUser = "is not a Slack member id (U… or W…, e.g. U0123ABCD): approvers are named by id, not by name; " +
		"in Slack open the person's profile → ⋮ (More) → Copy member ID"
	findSlackGroup = "is not a Slack user group id (S…, e.g. S0123ABCD): groups are named by id, not by handle; " +
		"an admin finds it in Slack's admin pages (User groups: the group's address ends in its id), " +
		"or the Web API's usergroups.list returns it (scope usergroups:read)"
	findDiscordID = "is not a Discord id (a number of 17 to 20 digits): in Discord turn on User Settings → Advanced → " +
		"Developer Mode, then right-click the %s → Copy %s ID"
)

// approverIDErrors refuses approver ids that cannot be their platform's,
// and an explicit quorum of 0 (no approval needed would mean any vote,
// or none, decides).
func (c *Config) approverIDErrors() []error {
	var errs []error
	if line, set := c.lines["approvals.quorum"]; set && c.Approvals.Quorum == 0 {
		errs = append(errs, &ConfigError{File: c.file, Line: line, Key: "approvals.quorum",
			Msg: "must be 1 or more: it is how many approvals a request needs (leave it out for 1)"})
	}
	for i, a := range c.Approvals.Approvers {
		key := fmt.Sprintf("approvals.approvers[%d]", i)
		errs = append(errs, c.badIDs(key+".slack.users", a.Slack.Users, slackUserID, findSlackUser)...)
		errs = append(errs, c.badIDs(key+".slack.user_groups", a.Slack.UserGroups, slackGroupID, findSlackGroup)...)
		errs = append(errs, c.badIDs(key+".discord.users", a.Discord.Users, snowflake, fmt.Sprintf(findDiscordID, "user", "User"))...)
		errs = append(errs, c.badIDs(key+".discord.roles", a.Discord.Roles, snowflake, fmt.Sprintf(findDiscordID, "role in Server Settings → Roles", "Role"))...)
	}
	return errs
}

// badIDs reports each id of a list that does not match shape.
func (c *Config) badIDs(key string, ids []string, shape *regexp.Regexp, why string) []error {
	var errs []error
	for j, id := range ids {
		if id == "" || shape.MatchString(id) {
			continue // empty ones are the section's own error
		}
		errs = append(errs, c.problem(fmt.Sprintf("%s[%d]", key, j), fmt.Sprintf("%q %s", id, why)))
	}
	return errs
}
