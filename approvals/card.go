package approvals

import (
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/store"
)

// Card is what an approval card shows, platform-neutral; each connector
// renders it (Slack blocks, a Discord message, a web panel) with two
// buttons whose values come from ButtonValue.
type Card struct {
	ID        string
	Host      string
	Cwd       string
	Requester string
	// Command is the command made safe to show: render Command.Preview in
	// a code block, and when Command.Long is set attach Command.Text as a
	// file (the preview says so).
	Command Display
	// Reasons are the policy's reasons, made visible the same way.
	Reasons   []string
	Quorum    int
	ExpiresAt time.Time
	State     store.ApprovalState
	DecidedBy string
	DecidedAt time.Time
}

// NewCard prepares a request for display.
func NewCard(a store.Approval, opt DisplayOptions) Card {
	c := Card{ID: a.ID, Host: a.Host, Cwd: a.Cwd, Requester: a.Requester, Command: RenderCommand(a.Command, opt),
		Quorum: a.Quorum, ExpiresAt: a.ExpiresAt, State: a.State, DecidedBy: a.DecidedBy, DecidedAt: a.DecidedAt}
	for _, r := range a.Reasons {
		c.Reasons = append(c.Reasons, RenderCommand(r, DisplayOptions{}).Text)
	}
	return c
}

// Text renders the card as plain text, for the console and as the
// fallback text of richer messages.
func (c Card) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approval needed (request %s)\n", c.ID)
	fmt.Fprintf(&b, "Host: %s\n", c.Host)
	if c.Cwd != "" {
		fmt.Fprintf(&b, "Directory: %s\n", RenderCommand(c.Cwd, DisplayOptions{}).Text)
	}
	fmt.Fprintf(&b, "Requested by: %s\n", c.Requester)
	fmt.Fprintf(&b, "Command:\n%s\n", c.Command.Preview)
	if len(c.Command.Hidden) > 0 {
		fmt.Fprintf(&b, "Warning: %d hidden characters made visible: %s\n", len(c.Command.Hidden), strings.Join(c.Command.Hidden, "; "))
	}
	if len(c.Reasons) > 0 {
		fmt.Fprintf(&b, "Why it needs approval:\n  - %s\n", strings.Join(c.Reasons, "\n  - "))
	}
	if c.State == store.ApprovalPending || c.State == "" {
		fmt.Fprintf(&b, "Needs %d approval(s); expires %s", c.Quorum, c.ExpiresAt.Format(time.RFC3339))
	} else {
		fmt.Fprintf(&b, "%s by %s at %s", c.State, c.DecidedBy, c.DecidedAt.Format(time.RFC3339))
	}
	return b.String()
}

// ButtonValue is the value of an approve or deny button of a card.
func ButtonValue(id, vote string) string { return "approval:" + vote + ":" + id }

// ParseButtonValue reads a ButtonValue back.
func ParseButtonValue(v string) (id, vote string, ok bool) {
	rest, ok := strings.CutPrefix(v, "approval:")
	if !ok {
		return "", "", false
	}
	vote, id, ok = strings.Cut(rest, ":")
	if !ok || id == "" || (vote != VoteApprove && vote != VoteDeny) {
		return "", "", false
	}
	return id, vote, true
}
