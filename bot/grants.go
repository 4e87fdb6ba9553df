package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// ActionApproveSimilar is the card's "Approve similar for 30 min in this
// thread" button; its value is the request id.
const ActionApproveSimilar = "approve_similar"

// grantGate turns a click on "Approve similar" into an approval and a
// scoped grant (approvals.Gate does).
type grantGate interface {
	GrantSimilar(ctx context.Context, id string, voter approvals.Person, gs approvals.GrantStore) (approvals.VoteResult, approvals.Grant, error)
}

var _ grantGate = (*approvals.Gate)(nil)

// similarButton is the card's third button, shown while a request one
// approval decides waits in a thread (approvals.Grantable).
func similarButton(a approvals.Approval) connectors.Button {
	return connectors.Button{ActionID: ActionApproveSimilar, Value: a.ID, Label: approvals.GrantLabel}
}

// grantSimilar takes a click on "Approve similar": the clicker's approval
// of the card's request and, when it decided it, a grant the thread is
// told of.
func (c *cards) grantSimilar(ctx context.Context, ev connectors.Event) {
	if c.granter == nil || c.grants == nil {
		respond(ctx, c.out, ev, "Nobody can approve commands here; that button does nothing.")
		return
	}
	voter := approvals.Person{Platform: ev.Platform, ID: ev.User.ID, Groups: ev.User.Groups}
	res, g, err := c.granter.GrantSimilar(ctx, ev.Value, voter, c.grants)
	if err != nil && res.Status != approvals.VoteDecided {
		c.log.Error("approve similar", "request", ev.Value, "err", err)
		respond(ctx, c.out, ev, "Your approval could not be recorded (internal error); try again.")
		return
	}
	if res.Status != approvals.VoteDecided {
		respond(ctx, c.out, ev, voteMessage(res))
		return
	}
	if c.edit(ctx, ev, res.Approval) {
		c.store.MarkCardShown(ctx, res.Approval.ID)
	}
	c.decided(ctx, res.Approval)
	if err != nil || g.ID == 0 {
		c.log.Error("approve similar: the grant was not recorded", "request", ev.Value, "err", err)
		respond(ctx, c.out, ev, "You approved it: it runs now. The grant for similar commands could not be recorded (internal error); they will ask again.")
		return
	}
	c.out.reply(ctx, ev, grantNews(g))
}

// grantNews tells the thread what a grant lets run, and how to end it.
func grantNews(g approvals.Grant) string {
	return fmt.Sprintf("%s approved commands like %s on %s in this thread for %s, without a new card (grant %d; `approvals revoke %d` ends it).",
		personMention(g.By), commandSpan(g.Command), hostsSpan(g.Hosts), approvals.HumanDuration(g.ExpiresAt.Sub(g.CreatedAt)), g.ID, g.ID)
}

func hostsSpan(hosts string) string { return "`" + strings.ReplaceAll(hosts, ",", "`, `") + "`" }

// grantRecords is what `approvals` reads and changes of a thread's grants
// (the store's Approvals aggregate).
type grantRecords interface {
	ActiveGrants(ctx context.Context, sessionID int64, now time.Time) ([]approvals.Grant, error)
	RevokeGrant(ctx context.Context, sessionID, id int64, by string, now time.Time) (bool, error)
}

// approvalsUsage is the answer to an `approvals` line of any other form.
const approvalsUsage = "Say `approvals revoke N`, where N is a grant's number from `approvals`."

// approvalsCommand answers `approvals` (the waiting requests and this
// thread's grants) and `approvals revoke N`; any other words after
// `approvals` get the usage, not the model.
func (c *commands) approvalsCommand(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, rest string) {
	switch args := strings.Fields(rest); {
	case len(args) == 2 && strings.EqualFold(args[0], "revoke"):
		c.revokeGrant(ctx, ev, sess, args[1])
		return
	case len(args) > 0:
		c.out.reply(ctx, ev, approvalsUsage)
		return
	}
	text, err := c.approvalsText(ctx, ev)
	if err != nil {
		internalError(ctx, c.out, c.log, ev, err)
		return
	}
	if grants, err := c.grantsText(ctx, sess); err != nil {
		internalError(ctx, c.out, c.log, ev, err)
		return
	} else if grants != "" {
		text += "\n\n" + grants
	}
	c.out.reply(ctx, ev, text)
}

// grantsText lists the thread's active grants: number, who, what, on
// which hosts and for how long still; "" when there are none.
func (c *commands) grantsText(ctx context.Context, sess agent.SessionInfo) (string, error) {
	if c.grants == nil {
		return "", nil
	}
	now := c.clock()
	gs, err := c.grants.ActiveGrants(ctx, sess.ID, now)
	if err != nil || len(gs) == 0 {
		return "", err
	}
	lines := []string{"Approved similar commands in this thread (`approvals revoke N` ends grant N):"}
	for _, g := range gs {
		lines = append(lines, fmt.Sprintf("grant %d: commands like %s on %s — by %s · %s left",
			g.ID, commandSpan(g.Command), hostsSpan(g.Hosts), personMention(g.By), approvals.HumanDuration(g.ExpiresAt.Sub(now).Round(time.Minute))))
	}
	return strings.Join(lines, "\n"), nil
}

// revokeGrant answers `approvals revoke N`: anyone in the thread may end
// a grant (it only takes a permission away).
func (c *commands) revokeGrant(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, arg string) {
	n, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	switch {
	case err != nil || n <= 0:
		c.out.reply(ctx, ev, approvalsUsage)
		return
	case c.grants == nil:
		c.out.reply(ctx, ev, fmt.Sprintf("This thread has no active grant %d; `approvals` lists them.", n))
		return
	}
	ok, err := c.grants.RevokeGrant(ctx, sess.ID, n, ev.Platform+":"+ev.User.ID, c.clock())
	switch {
	case err != nil:
		internalError(ctx, c.out, c.log, ev, err)
	case !ok:
		c.out.reply(ctx, ev, fmt.Sprintf("This thread has no active grant %d; `approvals` lists them.", n))
	default:
		c.out.reply(ctx, ev, fmt.Sprintf("Grant %d revoked: similar commands ask for approval again.", n))
	}
}

func (c *commands) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// isApprovalsLine reports whether text is an `approvals` line: any line
// whose first word is `approvals` is the command (a form it does not know
// gets its usage), never a question for the model.
func isApprovalsLine(text string) bool {
	word, _ := firstWord(text)
	return strings.EqualFold(word, "approvals")
}

// approvalsNow answers an `approvals` line in its thread's session, out
// of the thread's queue (routeStage).
func (c *commands) approvalsNow(open func(context.Context, connectors.Event) (agent.SessionInfo, error)) func(context.Context, connectors.Event) {
	return func(ctx context.Context, ev connectors.Event) {
		sess, err := open(ctx, ev)
		if err != nil {
			internalError(ctx, c.out, c.log, ev, err)
			return
		}
		_, rest := firstWord(ev.Text)
		c.approvalsCommand(ctx, ev, sess, rest)
	}
}
