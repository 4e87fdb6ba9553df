package checks

import (
	"fmt"
	"regexp"
	"strings"
)

// The mentions a schedule's notify may hold, by platform: what Slack and
// Discord notify. Anything else would show as text and ping no one.
var mentionShapes = []struct {
	platform string
	re       *regexp.Regexp
}{
	{"slack", regexp.MustCompile(`^<(?:@[UW][A-Z0-9]{2,}|!subteam\^S[A-Z0-9]{2,}|!here)>$`)},
	{"discord", regexp.MustCompile(`^<@&?[0-9]{17,20}>$`)},
}

// mentionPlatform is the platform whose mention m is, "" for none.
func mentionPlatform(m string) string {
	for _, s := range mentionShapes {
		if s.re.MatchString(m) {
			return s.platform
		}
	}
	return ""
}

// notifyFor are the schedule's mentions that platform notifies.
func (s Schedule) notifyFor(platform string) []string {
	var out []string
	for _, m := range s.Notify {
		if mentionPlatform(m) == platform {
			out = append(out, m)
		}
	}
	return out
}

// notifyAs is the schedule's way to announce a change, with its default.
func (s Schedule) notifyAs() NotifyAs {
	if s.NotifyAs == "" {
		return NotifyThread
	}
	return s.NotifyAs
}

// validateNotify checks each mention's shape, and that it goes somewhere:
// a Slack mention needs a Slack channel in post_to.
func (s Schedule) validateNotify(key string) []error {
	var errs []error
	for j, m := range s.Notify {
		k := fmt.Sprintf("%s.notify[%d]", key, j)
		platform := mentionPlatform(m)
		if platform == "" {
			errs = append(errs, FieldError{k, notMention(m)})
			continue
		}
		if !s.postsTo(platform) {
			errs = append(errs, FieldError{k, fmt.Sprintf("%q is a %s mention, but no post_to of this schedule is on %s: it would never be sent", m, platform, platform)})
		}
	}
	return errs
}

// postsTo reports whether one of the schedule's channels is on platform.
func (s Schedule) postsTo(platform string) bool {
	for _, d := range s.PostTo {
		if d.Platform == platform {
			return true
		}
	}
	return false
}

var (
	everyone     = regexp.MustCompile(`^(?:@(?:everyone|here|channel)|<!(?:everyone|channel)(?:\|[^>]*)?>)$`)
	slackGroup   = regexp.MustCompile(`^<!subteam\^[^>]*>$`)
	discordRole  = regexp.MustCompile(`^<@&[^>]*>$`)
	mentionsHelp = "write a Slack person <@U0123456789>, user group <!subteam^S0123456789> or <!here>, " +
		"or a Discord role <@&234567890123456789> or user <@123456789012345678>, in quotes"
)

// notMention says why m is not a mention opsbot sends, and what to write.
func notMention(m string) string {
	switch {
	case strings.TrimSpace(m) == "":
		return "is empty: " + mentionsHelp
	case everyone.MatchString(m):
		return fmt.Sprintf("%q would wake everyone in the channel, even those away: on Slack write <!here> (the members online) or a user group <!subteam^S0123456789>; on Discord a role <@&234567890123456789>", m)
	case slackGroup.MatchString(m):
		return fmt.Sprintf("%q: a Slack user group is named by its id, which starts with S: <!subteam^S0123456789> (People → User groups → the group → ⋯ → Copy group ID)", m)
	case discordRole.MatchString(m):
		return fmt.Sprintf("%q: a Discord role is named by its id, a long number: <@&234567890123456789> (with Developer Mode on, Server Settings → Roles → ⋯ → Copy Role ID)", m)
	case !strings.HasPrefix(m, "<"):
		return fmt.Sprintf("%q is a name, and a mention needs an id: %s", m, mentionsHelp)
	}
	return fmt.Sprintf("%q is not a mention opsbot can send: %s", m, mentionsHelp)
}
