package approvals

import (
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/policy"
)

// Card is what an approval card shows, made safe to display. The bot
// renders it as the one neutral card message (text, fields, Approve and
// Deny buttons whose value is the request id) that every connector shows;
// Text is its plain form for the terminal.
type Card struct {
	ID        string
	Host      string
	Cwd       string
	Requester string
	// Command is the command made safe to show: render Command.Preview in
	// a code block, and when Command.Long is set attach Command.Text as a
	// file (the preview says so).
	Command policy.Display
	// Reasons are the policy's reasons, made visible the same way.
	Reasons   []string
	Quorum    int
	ExpiresAt time.Time
	State     ApprovalState
	DecidedBy string
	DecidedAt time.Time
}

// NewCard prepares a request for display; a plan's is its summary
// (Shown), not its canonical text.
func NewCard(a Approval, opt policy.DisplayOptions) Card {
	c := Card{ID: a.ID, Host: a.Host, Cwd: a.Cwd, Requester: a.Requester, Command: policy.RenderCommand(Shown(a.Command), opt),
		Quorum: a.Quorum, ExpiresAt: a.ExpiresAt, State: a.State, DecidedBy: a.DecidedBy, DecidedAt: a.DecidedAt}
	for _, r := range a.Reasons {
		c.Reasons = append(c.Reasons, policy.RenderCommand(r, policy.DisplayOptions{}).Text)
	}
	return c
}

// TimeLayout is how approval cards, and the messages about them, show a
// time: one format everywhere.
const TimeLayout = "Jan 2 15:04 MST"

// FormatTime shows t in TimeLayout, in the bot's local time.
func FormatTime(t time.Time) string { return t.Local().Format(TimeLayout) }

// Heading is the card's first line: what is asked for while pending, the
// decision after ("Approved by @bob", "Denied by @bob", "Expired, not
// run").
func (c Card) Heading() string {
	by := person(c.DecidedBy)
	switch {
	case c.State == ApprovalExpired:
		return "Expired, not run"
	case c.State == ApprovalApproved:
		return "Approved by " + by
	case c.State == ApprovalDenied && strings.HasPrefix(by, "opsbot"):
		return "Denied: its approval card could not be posted"
	case c.State == ApprovalDenied:
		return "Denied by " + by
	}
	return "Approval needed"
}

// Risk is how the card is coloured where a platform can: decided, green
// once approved and grey once denied or expired; pending, RiskHigh when
// the request reaches several hosts at once (a plan or fleet command) or
// the config asks more than one person to approve it, RiskAsk otherwise.
func (c Card) Risk() connectors.Risk {
	switch c.State {
	case ApprovalApproved:
		return connectors.RiskApproved
	case ApprovalDenied, ApprovalExpired:
		return connectors.RiskClosed
	}
	if c.Quorum > 1 || strings.Contains(c.Host, ",") {
		return connectors.RiskHigh
	}
	return connectors.RiskAsk
}

// person shows a stored "platform:id" as "@id"; opsbot's own actors
// ("opsbot:expiry") stay as they are.
func person(key string) string {
	if _, id, ok := strings.Cut(key, ":"); ok && !strings.HasPrefix(key, "opsbot") {
		return "@" + id
	}
	return key
}

// Text renders the card as plain text, for the console and as the
// fallback text of richer messages.
func (c Card) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", c.Heading())
	fmt.Fprintf(&b, "Host: %s\n", c.Host)
	if c.Cwd != "" {
		fmt.Fprintf(&b, "Directory: %s\n", policy.RenderCommand(c.Cwd, policy.DisplayOptions{}).Text)
	}
	fmt.Fprintf(&b, "Requested by: %s\n", person(c.Requester))
	fmt.Fprintf(&b, "Command:\n%s\n", c.Command.Preview)
	if len(c.Command.Hidden) > 0 {
		fmt.Fprintf(&b, "Warning: %d hidden characters made visible: %s\n", len(c.Command.Hidden), strings.Join(c.Command.Hidden, "; "))
	}
	if len(c.Reasons) > 0 {
		fmt.Fprintf(&b, "Why it needs approval:\n  - %s\n", strings.Join(c.Reasons, "\n  - "))
	}
	switch c.State {
	case ApprovalPending, "":
		fmt.Fprintf(&b, "Needs %s; expires %s", Approvals(c.Quorum), FormatTime(c.ExpiresAt))
	case ApprovalExpired:
		fmt.Fprintf(&b, "Nobody decided by %s", FormatTime(c.DecidedAt))
	default:
		fmt.Fprintf(&b, "%s at %s", c.Heading(), FormatTime(c.DecidedAt))
	}
	return b.String()
}

// WhoMayApprove says, for people, who may approve a request on its
// platform: e.g. "@alice or @bob", "anyone on the web chat but @carol",
// "members of Slack group S123"; "nobody (no approver is configured for
// this channel and host)" when nobody may. The requester is left out
// unless the policy allows self-approval.
func (g *Gate) WhoMayApprove(a Approval) string {
	platform, requester, _ := strings.Cut(a.Requester, ":")
	var names []string
	anyone := false
	add := func(s string) {
		for _, n := range names {
			if n == s {
				return
			}
		}
		names = append(names, s)
	}
	for _, e := range g.cfg.Approvers {
		covered := true
		for _, host := range strings.Split(a.Host, ",") {
			if !e.covers(a.Channel, host, g.opt.HostGroups(host)) {
				covered = false
			}
		}
		if !covered {
			continue
		}
		var users, groups []string
		switch platform {
		case "slack":
			users, groups = e.Slack.Users, e.Slack.UserGroups
		case "discord":
			users, groups = e.Discord.Users, e.Discord.Roles
		case "web":
			users = e.Web.Users
		case "console":
			users = e.Console.Users
		}
		for _, u := range users {
			switch {
			case u == "*":
				anyone = true
			case u != requester || g.cfg.AllowSelfApproval:
				add(connectors.Mention(u))
			}
		}
		for _, grp := range groups {
			add("members of " + connectors.GroupMention(grp))
		}
	}
	self := ""
	if !g.cfg.AllowSelfApproval && requester != "" {
		self = " but " + connectors.Mention(requester)
	}
	switch {
	case anyone:
		return "anyone on the " + platform + " chat" + self
	case len(names) == 0:
		return "nobody (no approver is configured for this channel and host; see approvals.approvers)"
	case len(names) == 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Approvals says n approvals in words: "1 approval", "2 approvals".
func Approvals(n int) string {
	if n == 1 {
		return "1 approval"
	}
	return fmt.Sprintf("%d approvals", n)
}

// GrantLabel is the label of the card's button that approves the request
// and grants similar commands (GrantSimilar).
const GrantLabel = "Approve similar for 30 min in this thread"

// Grantable reports whether a card offers GrantLabel: a pending request
// of a thread that one approval decides (see GrantSimilar).
func Grantable(a Approval) bool {
	return a.State == ApprovalPending && a.Quorum <= 1 && a.SessionID != 0
}
