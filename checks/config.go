package checks

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// Config is the `checks` and `schedules` sections of the config file.
type Config struct {
	Checks    []Check    `yaml:"checks"`
	Schedules []Schedule `yaml:"schedules"`
}

// Check is one health check: a read-only command run on its targets and
// what its result must look like.
type Check struct {
	// Name is what schedules call the check.
	Name string `yaml:"name"`
	// Targets is a host, group:NAME or a comma list, as in `run`.
	Targets string `yaml:"targets"`
	// Command is the shell command run on each target.
	Command string `yaml:"command"`
	// Timeout is the command's deadline (default exec.timeout).
	Timeout time.Duration `yaml:"timeout"`
	// Expect says what a healthy result looks like.
	Expect Expect `yaml:"expect"`
}

// Expect is what a healthy result looks like. The thresholds compare the
// first number of the output (e.g. 85 from "85%").
type Expect struct {
	// Exit is the expected exit code (default 0).
	Exit int `yaml:"exit"`
	// WarnAbove makes a number above it a warning.
	WarnAbove *float64 `yaml:"warn_above"`
	// FailAbove makes a number above it a failure.
	FailAbove *float64 `yaml:"fail_above"`
	// OutputMatches is a regular expression the output (trailing blanks
	// trimmed) must match.
	OutputMatches string `yaml:"output_matches"`
}

// readsNumber reports whether the expectation needs a number from the output.
func (e Expect) readsNumber() bool { return e.WarnAbove != nil || e.FailAbove != nil }

// Schedule runs some checks on a cron and posts the report.
type Schedule struct {
	// Name is what `health NAME` calls the schedule.
	Name string `yaml:"name"`
	// Cron is 5 fields, a descriptor (@daily, @every 15m), optionally
	// after CRON_TZ=Zone/Name; without a zone, the bot's local time.
	Cron string `yaml:"cron"`
	// Checks are the names of the checks to run.
	Checks []string `yaml:"checks"`
	// PostTo are the channels that receive the report.
	PostTo []Destination `yaml:"post_to"`
	// Post is when to post: always, changes (default) or failures.
	Post PostMode `yaml:"post"`
	// NotifyAs is how a new failure or a recovery is announced: thread
	// (default: a reply in the day's thread, shown in the channel too) or
	// channel (a new message at the top of the channel).
	NotifyAs NotifyAs `yaml:"notify_as"`
	// Notify are mentions put at the start of that announcement, in each
	// platform's markup: Slack <!subteam^S…>, <@U…>, <!here>; Discord
	// <@&ROLEID>, <@USERID>. Each goes to the channels of its platform.
	Notify []string `yaml:"notify"`
}

// NotifyAs says how a schedule announces a change.
type NotifyAs string

// The ways to announce a change.
const (
	// NotifyThread replies in the day's thread and shows the reply in the
	// channel (Slack's "also send to channel"; on Discord, a channel
	// message that links the thread).
	NotifyThread NotifyAs = "thread"
	// NotifyChannel posts a new message at the top of the channel.
	NotifyChannel NotifyAs = "channel"
)

// Destination is a channel of a chat platform.
type Destination struct {
	Platform string `yaml:"platform"`
	Channel  string `yaml:"channel"`
}

// PostMode says when a schedule posts its report.
type PostMode string

// The post modes.
const (
	// PostAlways posts every run.
	PostAlways PostMode = "always"
	// PostChanges posts a run when something changed since the previous
	// one, and otherwise once a day ("still all ok").
	PostChanges PostMode = "changes"
	// PostFailures posts a run when something fails or is unreachable.
	PostFailures PostMode = "failures"
)

// mode is the schedule's post mode with its default.
func (s Schedule) mode() PostMode {
	if s.Post == "" {
		return PostChanges
	}
	return s.Post
}

// FieldError is a problem with one key of the config; Field is the key's
// path, e.g. "checks[0].expect.warn_above".
type FieldError struct {
	Key string
	Msg string
}

func (e FieldError) Error() string { return e.Key + ": " + e.Msg }

// Field is the key's path, for the config loader to find its line.
func (e FieldError) Field() string { return e.Key }

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate checks what needs no fleet: names, each cron and its zone, each
// expect, and that schedules name known checks. All problems are joined.
func (c Config) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, ch := range c.Checks {
		key := fmt.Sprintf("checks[%d]", i)
		errs = append(errs, checkName(key, ch.Name, "check", seen)...)
		errs = append(errs, ch.validate(key)...)
	}
	names := map[string]bool{}
	for i, s := range c.Schedules {
		key := fmt.Sprintf("schedules[%d]", i)
		errs = append(errs, checkName(key, s.Name, "schedule", names)...)
		errs = append(errs, s.validate(key, seen)...)
	}
	return errors.Join(errs...)
}

func checkName(key, name, what string, seen map[string]bool) []error {
	switch {
	case name == "":
		return []error{FieldError{key + ".name", "is required: give the " + what + " a name"}}
	case seen[name]:
		return []error{FieldError{key + ".name", fmt.Sprintf("%q is used twice: %s names must be unique", name, what)}}
	case !validName.MatchString(name):
		seen[name] = true
		return []error{FieldError{key + ".name", fmt.Sprintf("%q: use letters, digits, '.', '_' and '-'", name)}}
	}
	seen[name] = true
	return nil
}

func (ch Check) validate(key string) []error {
	var errs []error
	if strings.TrimSpace(ch.Targets) == "" {
		errs = append(errs, FieldError{key + ".targets", "is required: a host, group:NAME or a comma list"})
	}
	if strings.TrimSpace(ch.Command) == "" {
		errs = append(errs, FieldError{key + ".command", "is required: the read-only command to run on each target"})
	}
	if ch.Timeout < 0 {
		errs = append(errs, FieldError{key + ".timeout", "must be a positive duration, e.g. 30s"})
	}
	return append(errs, ch.Expect.validate(key+".expect")...)
}

func (e Expect) validate(key string) []error {
	var errs []error
	if e.Exit < 0 || e.Exit > 255 {
		errs = append(errs, FieldError{key + ".exit", fmt.Sprintf("%d is not an exit code: use 0 to 255", e.Exit)})
	}
	if e.OutputMatches != "" {
		if _, err := regexp.Compile(e.OutputMatches); err != nil {
			errs = append(errs, FieldError{key + ".output_matches", fmt.Sprintf("%q is not a regular expression (%s)", e.OutputMatches, regexpProblem(err))})
		}
	}
	if e.WarnAbove != nil && e.FailAbove != nil && *e.WarnAbove > *e.FailAbove {
		errs = append(errs, FieldError{key + ".warn_above", fmt.Sprintf("%g is above fail_above (%g): a warning must come before a failure", *e.WarnAbove, *e.FailAbove)})
	}
	return errs
}

// regexpProblem is the regexp package's complaint without its prefix.
func regexpProblem(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return "invalid"
}

func (s Schedule) validate(key string, checks map[string]bool) []error {
	var errs []error
	if _, err := ParseCron(s.Cron); err != nil {
		errs = append(errs, FieldError{key + ".cron", err.Error()})
	}
	if len(s.Checks) == 0 {
		errs = append(errs, FieldError{key + ".checks", "is required: the names of the checks to run"})
	}
	for j, name := range s.Checks {
		if !checks[name] {
			errs = append(errs, FieldError{fmt.Sprintf("%s.checks[%d]", key, j), fmt.Sprintf("%q is not a check: define it under checks", name)})
		}
	}
	for j, d := range s.PostTo {
		if d.Platform == "" || d.Channel == "" {
			errs = append(errs, FieldError{fmt.Sprintf("%s.post_to[%d]", key, j), "needs both platform and channel, e.g. {platform: slack, channel: C0123456789}"})
		}
	}
	switch s.Post {
	case "", PostAlways, PostChanges, PostFailures:
	default:
		errs = append(errs, FieldError{key + ".post", fmt.Sprintf("%q: use always, changes or failures", s.Post)})
	}
	switch s.NotifyAs {
	case "", NotifyThread, NotifyChannel:
	default:
		errs = append(errs, FieldError{key + ".notify_as", fmt.Sprintf("%q: use thread (a reply in the day's thread, shown in the channel too) or channel (a new message)", s.NotifyAs)})
	}
	return append(errs, s.validateNotify(key)...)
}

// Resolver turns a target into hosts; *hosts.Inventory is one.
type Resolver interface {
	Resolve(target string) ([]hosts.Host, error)
}

// ValidateFleet checks what needs the inventory and the policy: each
// check's targets resolve, and its command is allowed without approval on
// every target host — a scheduled run never waits for a click.
func (c Config) ValidateFleet(res Resolver, pol Policy) error {
	var errs []error
	for i, ch := range c.Checks {
		key := fmt.Sprintf("checks[%d]", i)
		list, err := res.Resolve(ch.Targets)
		if err != nil {
			errs = append(errs, FieldError{key + ".targets", fmt.Sprintf("check %q: %s", ch.Name, strings.TrimPrefix(err.Error(), "hosts: "))})
			continue
		}
		for _, h := range list {
			if ok, why := pol.Allowed(h, ch.Command); !ok {
				errs = append(errs, FieldError{key + ".command", needsApproval(ch.Name, h.Name, why)})
			}
		}
	}
	return errors.Join(errs...)
}

func needsApproval(check, host, why string) string {
	return fmt.Sprintf("check %q needs approval on host %s (%s); a scheduled check never waits for a click: use a read-only command, or allow it for that host in policy.rules",
		check, host, why)
}
