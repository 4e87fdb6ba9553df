package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// The approval buttons' action ids; their value is the request id.
const (
	ActionApprove = "approve"
	ActionDeny    = "deny"
)

// cardMessage renders an approval request: the command with invisible and
// control characters made visible, the host, the reasons, who asked, who
// may approve and when it expires; buttons while it is pending. Once
// decided, its heading says how ("Approved by @bob", "Expired, not run").
// who says who may approve (Gate.WhoMayApprove).
func cardMessage(a store.Approval, who string) connectors.Message {
	c := approvals.NewCard(a, approvals.DisplayOptions{})
	fence := strings.Repeat("`", max(3, longestRun(c.Command.Preview, '`')+1))
	var text strings.Builder
	// The heading names the decider as a mention of their platform.
	heading := c.Heading()
	if a.DecidedBy != "" && !strings.HasPrefix(a.DecidedBy, "opsbot") {
		heading = strings.Replace(heading, "@"+displayName(a.DecidedBy), mention(a.DecidedBy), 1)
	}
	fmt.Fprintf(&text, "**%s** — requested by %s", heading, mention(a.Requester))
	if a.State == store.ApprovalExpired {
		fmt.Fprintf(&text, "; nobody decided within %s", humanDuration(a.ExpiresAt.Sub(a.CreatedAt)))
	}
	fmt.Fprintf(&text, "\n%s\n%s\n%s", fence, c.Command.Preview, fence)
	if len(c.Command.Hidden) > 0 {
		fmt.Fprintf(&text, "\n⚠️ hidden characters made visible: %s", strings.Join(c.Command.Hidden, "; "))
	}
	if len(c.Reasons) > 0 {
		fmt.Fprintf(&text, "\nWhy: %s", strings.Join(c.Reasons, "; "))
	}
	m := connectors.Message{Text: text.String(), Fields: []connectors.Field{{Title: "Host", Value: a.Host}}}
	if a.Cwd != "" {
		m.Fields = append(m.Fields, connectors.Field{Title: "Directory", Value: c.Cwd})
	}
	switch a.State {
	case store.ApprovalPending:
		needs := "1 approval"
		if a.Quorum > 1 {
			needs = fmt.Sprintf("%d approvals", a.Quorum)
		}
		if who != "" {
			m.Fields = append(m.Fields, connectors.Field{Title: "Who may approve", Value: who})
		}
		m.Fields = append(m.Fields, connectors.Field{Title: "Needs", Value: needs})
		m.Context = "expires " + approvals.FormatTime(a.ExpiresAt)
		m.Buttons = []connectors.Button{
			{ActionID: ActionApprove, Value: a.ID, Label: "Approve", Style: connectors.StylePrimary},
			{ActionID: ActionDeny, Value: a.ID, Label: "Deny", Style: connectors.StyleDanger},
		}
	case store.ApprovalExpired:
		m.Context = fmt.Sprintf("expired at %s without a decision: not run", approvals.FormatTime(a.DecidedAt))
	default:
		m.Context = fmt.Sprintf("%s at %s", decisionText(a), approvals.FormatTime(a.DecidedAt))
	}
	return m
}

// card renders a request's card with who may approve it.
func (b *Bot) card(a store.Approval) connectors.Message {
	who := ""
	if b.Gate != nil {
		who = b.Gate.WhoMayApprove(a)
	}
	return cardMessage(a, who)
}

// longestRun is the length of the longest run of c in s: a code fence
// must be longer than any run of backticks inside the block.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// mention addresses a person stored as "platform:id" in a message, as
// their platform does (connectors.Mention).
func mention(key string) string { return connectors.Mention(displayName(key)) }

// plainMention names a person stored as "platform:id" for the model and
// logs: @id.
func plainMention(key string) string { return "@" + displayName(key) }

func displayName(key string) string {
	if _, id, ok := strings.Cut(key, ":"); ok && !strings.HasPrefix(key, "opsbot") {
		return id
	}
	return key
}

// postCard posts a request's card into the thread and remembers where.
func (b *Bot) postCard(ctx context.Context, ev connectors.Event, id string) {
	a, err := b.Store.Approval(ctx, id)
	if err != nil {
		b.log().Error("approval card", "id", id, "err", err)
		return
	}
	ref, err := b.post(ctx, destOf(ev), b.card(a))
	if err != nil {
		// Nobody can approve what they cannot see: deny rather than wait.
		b.log().Error("post approval card", "id", id, "err", err)
		b.Store.DecideApproval(context.WithoutCancel(ctx), id, store.ApprovalDenied, "opsbot:card-not-posted")
		return
	}
	if err := b.Store.SetApprovalCard(context.WithoutCancel(ctx), id, ref.Channel, ref.ID); err != nil {
		b.log().Error("record approval card", "id", id, "err", err)
	}
}

// refreshCards shows the decision on the cards of decided requests in the
// thread that still show buttons (expired ones, mostly: a click updates
// its own card).
func (b *Bot) refreshCards(ctx context.Context, ev connectors.Event) {
	sess, _, err := b.Store.SessionFor(ctx, store.ThreadKey{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread})
	if err != nil {
		return
	}
	cards, err := b.Store.StaleCards(ctx, sess.ID)
	if err != nil {
		b.log().Warn("stale cards", "err", err)
		return
	}
	c, ok := b.conn(ev.Platform)
	if !ok {
		return
	}
	for _, a := range cards {
		_, msgID, _ := b.Store.ApprovalCard(ctx, a.ID)
		ref := connectors.Ref{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread, ID: msgID}
		if err := editRetrying(ctx, c, ref, b.card(a)); err == nil {
			b.Store.MarkCardShown(ctx, a.ID)
		}
	}
}

// refreshAllCards edits every card that still shows buttons for a request
// already decided — expired, decided while no turn waited, or decided
// just before a crash cut the card's edit — so a card never offers a
// click that can only be refused. It runs with the expiry sweep.
func (b *Bot) refreshAllCards(ctx context.Context) {
	as, channels, messages, err := b.Store.AllStaleCards(ctx, 100)
	if err != nil {
		b.log().Warn("stale cards", "err", err)
		return
	}
	for i, a := range as {
		if a.SessionID == 0 {
			b.Store.MarkCardShown(ctx, a.ID)
			continue
		}
		sess, err := b.Store.Session(ctx, a.SessionID)
		if err != nil {
			continue
		}
		c, ok := b.conn(sess.Platform)
		if !ok {
			continue // its platform is not configured now
		}
		ref := connectors.Ref{Platform: sess.Platform, Workspace: sess.Workspace, Channel: channels[i], Thread: sess.Thread, ID: messages[i]}
		if err := editRetrying(ctx, c, ref, b.card(a)); err != nil {
			b.log().Warn("update a decided card", "err", err)
			continue
		}
		b.Store.MarkCardShown(ctx, a.ID)
	}
}

// action handles a button click.
func (b *Bot) action(ctx context.Context, ev connectors.Event) {
	switch ev.ActionID {
	case ActionStop:
		id, ok := parseThreadID(ev.Value)
		if ok {
			if why := b.stopRefusal(id, ev); why != "" {
				b.respond(ctx, ev, why)
				return
			}
		}
		if !ok || !b.stopTurn(id, stopperOf(ev)) {
			b.respond(ctx, ev, "Nothing is running in this thread any more.")
			return
		}
		if ev.Respond != nil {
			ev.Respond(ctx, "Stopped.")
		}
	case ActionApprove, ActionDeny:
		b.vote(ctx, ev)
	case ActionAskAgain:
		b.askAgain(ctx, ev)
	default:
		b.respond(ctx, ev, "That button does nothing any more.")
	}
}

// vote records a click on an approval card and shows its effect.
func (b *Bot) vote(ctx context.Context, ev connectors.Event) {
	voter := approvals.Person{Platform: ev.Platform, ID: ev.User.ID, Groups: ev.User.Groups}
	res, err := b.Gate.Vote(ctx, ev.Value, voter, ev.ActionID)
	if err != nil {
		b.log().Error("vote", "request", ev.Value, "err", err)
		b.respond(ctx, ev, "Your vote could not be recorded (internal error); try again.")
		return
	}
	if res.Status != approvals.VoteDecided {
		b.respond(ctx, ev, voteMessage(res))
		if res.Status == approvals.VoteCounted {
			b.editCard(ctx, ev, res.Approval)
		}
		return
	}
	b.editCard(ctx, ev, res.Approval)
	b.Store.MarkCardShown(ctx, res.Approval.ID)
	// The turn that asked acts on the decision when it still waits;
	// after a restart nobody does, and the follow-up runs the command or
	// says why not.
	b.followUpNow(ctx, res.Approval)
	if ev.Respond != nil {
		// Only where it can be private: the card and the thread show
		// the decision to everyone else.
		said := "You denied it: it will not run."
		if res.Approval.State == store.ApprovalApproved {
			said = "You approved it: it runs now."
		}
		ev.Respond(ctx, said)
	}
}

// voteMessage tells the clicker what their vote did, in words (the
// approvals package's own message names request ids and platform keys).
func voteMessage(v approvals.VoteResult) string {
	a := v.Approval
	switch v.Status {
	case approvals.VoteCounted:
		return fmt.Sprintf("Your approval is counted: %d of %d needed.", v.Approvals, a.Quorum)
	case approvals.VoteLate:
		if a.State == store.ApprovalExpired {
			return fmt.Sprintf("Too late: nobody decided by %s, so it expired and did not run; nothing changed.", approvals.FormatTime(a.DecidedAt))
		}
		return fmt.Sprintf("This request was already %s at %s; nothing changed.", decisionText(a), approvals.FormatTime(a.DecidedAt))
	case approvals.VoteDuplicate:
		return "You have already voted on this request; one vote per person."
	}
	return "Your vote was not counted: " + v.Reason
}

func (b *Bot) editCard(ctx context.Context, ev connectors.Event, a store.Approval) {
	c, ok := b.conn(ev.Platform)
	if !ok {
		return
	}
	if err := editRetrying(ctx, c, ev.Ref, b.card(a)); err != nil {
		b.log().Warn("update approval card", "id", a.ID, "err", err)
	}
}

// respond answers the clicker alone where the platform can, else in the
// thread.
func (b *Bot) respond(ctx context.Context, ev connectors.Event, text string) {
	if ev.Respond != nil {
		if err := ev.Respond(ctx, text); err == nil {
			return
		}
	}
	b.reply(ctx, ev, text)
}
