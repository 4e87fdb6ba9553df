package approvals

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// GateConfig is the `approvals` section of the config file.
type GateConfig struct {
	// Quorum is how many approvals approve a request (default 1).
	Quorum int `yaml:"quorum"`
	// Expiry is how long a request waits for a decision (default 15m); no
	// decision by then is a deny.
	Expiry time.Duration `yaml:"expiry"`
	// AllowSelfApproval lets a requester approve their own request.
	AllowSelfApproval bool `yaml:"allow_self_approval"`
	// Approvers says who may vote. A person may vote on a request when an
	// entry covers the request's channel and host and names the person.
	// With no entries, nobody can approve and every request expires.
	Approvers []ApproverConfig `yaml:"approvers"`
}

// ApproverConfig is one entry of `approvals.approvers`.
type ApproverConfig struct {
	// Channels limits the entry to requests made in these channel ids;
	// empty means every channel.
	Channels []string `yaml:"channels"`
	// HostGroups limits the entry to requests for hosts in these groups,
	// Hosts to these host names; both empty means every host.
	HostGroups []string `yaml:"host_groups"`
	Hosts      []string `yaml:"hosts"`
	// Slack approvers: user ids (U…) and user group ids (S…).
	Slack SlackApprovers `yaml:"slack"`
	// Discord approvers: user ids and role ids.
	Discord DiscordApprovers `yaml:"discord"`
	// Web approvers: user names of the web chat.
	Web UserList `yaml:"web"`
	// Console approvers: user names at the terminal of `opsbot chat`.
	Console UserList `yaml:"console"`
}

// SlackApprovers names Slack users and user groups.
type SlackApprovers struct {
	Users      []string `yaml:"users"`
	UserGroups []string `yaml:"user_groups"`
}

// DiscordApprovers names Discord users and roles.
type DiscordApprovers struct {
	Users []string `yaml:"users"`
	Roles []string `yaml:"roles"`
}

// UserList names users of a platform without groups. For web, "*" names
// everyone who can reach the chat.
type UserList struct {
	Users []string `yaml:"users"`
}

// Defaults of the approvals section.
const (
	DefaultQuorum = 1
	DefaultExpiry = 15 * time.Minute
)

// WithDefaults fills what the file left empty.
func (c GateConfig) WithDefaults() GateConfig {
	if c.Quorum == 0 {
		c.Quorum = DefaultQuorum
	}
	if c.Expiry == 0 {
		c.Expiry = DefaultExpiry
	}
	return c
}

// Validate reports every problem of the approvals section at once.
func (c GateConfig) Validate() error {
	var errs []error
	if c.Quorum < 0 {
		errs = append(errs, fieldError{"quorum", "must be 1 or more"})
	}
	if c.Expiry < 0 {
		errs = append(errs, fieldError{"expiry", "must be a positive duration, e.g. 15m"})
	}
	for i, a := range c.Approvers {
		if a.empty() {
			errs = append(errs, fieldError{fmt.Sprintf("approvers[%d]", i), "names nobody: list slack, discord, web or console users (or slack user_groups, discord roles)"})
		}
		errs = append(errs, a.validateIDs(fmt.Sprintf("approvers[%d]", i))...)
	}
	return errors.Join(errs...)
}

func (a ApproverConfig) empty() bool {
	return len(a.Slack.Users)+len(a.Slack.UserGroups)+len(a.Discord.Users)+len(a.Discord.Roles)+len(a.Web.Users)+len(a.Console.Users) == 0
}

func (a ApproverConfig) validateIDs(key string) []error {
	lists := []struct {
		key string
		ids []string
	}{
		{"channels", a.Channels}, {"host_groups", a.HostGroups}, {"hosts", a.Hosts},
		{"slack.users", a.Slack.Users}, {"slack.user_groups", a.Slack.UserGroups},
		{"discord.users", a.Discord.Users}, {"discord.roles", a.Discord.Roles},
		{"web.users", a.Web.Users}, {"console.users", a.Console.Users},
	}
	var errs []error
	for _, l := range lists {
		for j, id := range l.ids {
			if strings.TrimSpace(id) == "" || strings.TrimSpace(id) != id {
				errs = append(errs, fieldError{fmt.Sprintf("%s.%s[%d]", key, l.key, j), fmt.Sprintf("%q is not an id: no empty values or surrounding spaces", id)})
			}
		}
	}
	return errs
}

// fieldError is a validation error about one key of a section; the config
// loader finds the key's line through Field.
type fieldError struct{ key, msg string }

// Error is the key and what is wrong with it.
func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the dotted path of the offending key, relative to the section.
func (e fieldError) Field() string { return e.key }
