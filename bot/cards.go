package bot

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// ownSessionDir says whether a's directory is the one the bot made for
// its thread (<data_dir>/sessions/<session id>, sessions.open): where
// every local command runs unless one was chosen, so naming it on the
// card tells an approver nothing but an internal path.
func ownSessionDir(a approvals.Approval) bool {
	return a.SessionID != 0 && filepath.Base(a.Cwd) == strconv.FormatInt(a.SessionID, 10) && filepath.Base(filepath.Dir(a.Cwd)) == "sessions"
}

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
func cardMessage(a approvals.Approval, who string) connectors.Message {
	c := approvals.NewCard(a, policy.DisplayOptions{})
	fence := strings.Repeat("`", max(3, longestRun(c.Command.Preview, '`')+1))
	var text strings.Builder
	// The heading names the decider as a mention of their platform.
	heading := c.Heading()
	if a.DecidedBy != "" && !strings.HasPrefix(a.DecidedBy, "opsbot") {
		heading = strings.Replace(heading, "@"+displayName(a.DecidedBy), mention(a.DecidedBy), 1)
	}
	fmt.Fprintf(&text, "**%s** — requested by %s", heading, mention(a.Requester))
	if a.State == approvals.ApprovalExpired {
		fmt.Fprintf(&text, "; nobody decided within %s", approvals.HumanDuration(a.ExpiresAt.Sub(a.CreatedAt)))
	}
	fmt.Fprintf(&text, "\n%s\n%s\n%s", fence, c.Command.Preview, fence)
	if len(c.Command.Hidden) > 0 {
		fmt.Fprintf(&text, "\n⚠️ hidden characters made visible: %s", strings.Join(c.Command.Hidden, "; "))
	}
	if len(c.Reasons) > 0 {
		fmt.Fprintf(&text, "\nWhy: %s", strings.Join(c.Reasons, "; "))
	}
	m := connectors.Message{Text: text.String(), Fields: []connectors.Field{{Title: "Host", Value: a.Host}}, Risk: c.Risk()}
	if a.Cwd != "" && !ownSessionDir(a) {
		m.Fields = append(m.Fields, connectors.Field{Title: "Directory", Value: c.Cwd})
	}
	switch a.State {
	case approvals.ApprovalPending:
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
	case approvals.ApprovalExpired:
		m.Context = fmt.Sprintf("expired at %s without a decision: not run", approvals.FormatTime(a.DecidedAt))
	default:
		m.Context = fmt.Sprintf("%s at %s", decisionText(a), approvals.FormatTime(a.DecidedAt))
	}
	return m
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

func displayName(key string) string {
	if _, id, ok := strings.Cut(key, ":"); ok && !strings.HasPrefix(key, "opsbot") {
		return id
	}
	return key
}

// cards shows approval requests in their threads and takes the votes
// cast on them: a request's card is posted as it opens, each click is
// counted through the gate, and a card shows the decision once there is
// one (no card offers a click that can only be refused).
type cards struct {
	store    cardStore
	sessions sessionLookup
	// gate counts votes and says who may approve; nil when nobody can.
	gate voteGate
	out  poster
	// decided acts on a request a vote decided (its follow-up).
	decided func(ctx context.Context, a approvals.Approval)
	// granter and grants take "Approve similar" (grants.go); nil when
	// grants are off.
	granter grantGate
	grants  approvals.GrantStore
	log     *slog.Logger
	// since is when this process started: a pending request opened
	// before it, with no card on record, lost its card to the process
	// that opened it (cardplace.go).
	since time.Time
}

// cardStore is what the cards read and record of approval requests.
type cardStore interface {
	Approval(ctx context.Context, id string) (approvals.Approval, error)
	DecideApproval(ctx context.Context, id string, to approvals.ApprovalState, by string) (bool, approvals.Approval, error)
	SetApprovalCard(ctx context.Context, id, channel, message string) error
	ApprovalCard(ctx context.Context, id string) (channel, message string, err error)
	StaleCards(ctx context.Context, sessionID int64) ([]approvals.Approval, error)
	AllStaleCards(ctx context.Context, limit int) ([]approvals.Approval, []string, []string, error)
	MarkCardShown(ctx context.Context, id string) error
	// UnplacedCards lists decided requests whose card's place was never
	// recorded (cardplace.go).
	UnplacedCards(ctx context.Context, limit int) ([]approvals.Approval, error)
	// UncardedPending lists pending requests an earlier process opened
	// whose card's place was never recorded (cardplace.go).
	UncardedPending(ctx context.Context, before time.Time, limit int) ([]approvals.Approval, error)
}

// voteGate counts the votes on a request and names who may cast them
// (approvals.Gate does).
type voteGate interface {
	Vote(ctx context.Context, id string, voter approvals.Person, vote string) (approvals.VoteResult, error)
	WhoMayApprove(a approvals.Approval) string
}

var (
	_ cardStore = (*store.Approvals)(nil)
	_ voteGate  = (*approvals.Gate)(nil)
)

// message renders a request's card with who may approve it.
func (c *cards) message(a approvals.Approval) connectors.Message {
	who := ""
	if c.gate != nil {
		who = c.gate.WhoMayApprove(a)
	}
	m := cardMessage(a, who)
	if c.grants != nil && approvals.Grantable(a) {
		m.Buttons = append(m.Buttons, similarButton(a))
	}
	return m
}

// post posts a request's card into the thread and remembers where. A card
// that cannot be posted denies its request: nobody can approve what they
// cannot see.
func (c *cards) post(ctx context.Context, ev connectors.Event, id string) {
	a, err := c.store.Approval(ctx, id)
	if err != nil {
		c.log.Error("approval card", "id", id, "err", err)
		return
	}
	ref, err := c.out.post(ctx, destOf(ev), c.message(a))
	if err != nil {
		c.log.Error("post approval card", "id", id, "err", err)
		c.store.DecideApproval(context.WithoutCancel(ctx), id, approvals.ApprovalDenied, "opsbot:card-not-posted")
		return
	}
	if err := c.store.SetApprovalCard(context.WithoutCancel(ctx), id, ref.Channel, ref.ID); err != nil {
		c.log.Error("record approval card", "id", id, "err", err)
	}
}

// refresh shows the decision on the cards of decided requests in the
// thread that still show buttons (expired ones, mostly: a click updates
// its own card).
func (c *cards) refresh(ctx context.Context, ev connectors.Event) {
	sess, _, err := c.sessions.SessionFor(ctx, store.ThreadKey{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread})
	if err != nil {
		return
	}
	stale, err := c.store.StaleCards(ctx, sess.ID)
	if err != nil {
		c.log.Warn("stale cards", "err", err)
		return
	}
	conn, ok := c.out.conn(ev.Platform)
	if !ok {
		return
	}
	for _, a := range stale {
		_, msgID, _ := c.store.ApprovalCard(ctx, a.ID)
		ref := connectors.Ref{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread, ID: msgID}
		if err := c.show(ctx, conn, ref, a); err == nil {
			c.store.MarkCardShown(ctx, a.ID)
		}
	}
}

// refreshAll edits every card that still shows buttons for a request
// already decided — expired, decided while no turn waited, or decided
// just before a crash cut the card's edit — so a card never offers a
// click that can only be refused. It runs with the expiry sweep.
func (c *cards) refreshAll(ctx context.Context) {
	c.placeUnplaced(ctx)
	c.postUncarded(ctx)
	as, channels, messages, err := c.store.AllStaleCards(ctx, 100)
	if err != nil {
		c.log.Warn("stale cards", "err", err)
		return
	}
	for i, a := range as {
		if a.SessionID == 0 {
			c.store.MarkCardShown(ctx, a.ID)
			continue
		}
		sess, conn, ok := c.threadOf(ctx, a)
		if !ok {
			continue
		}
		ref := connectors.Ref{Platform: sess.Platform, Workspace: sess.Workspace, Channel: channels[i], Thread: sess.Thread, ID: messages[i]}
		if err := c.show(ctx, conn, ref, a); err != nil {
			c.log.Warn("update a decided card", "err", err)
			continue
		}
		c.store.MarkCardShown(ctx, a.ID)
	}
}

// vote records a click on an approval card and shows its effect.
func (c *cards) vote(ctx context.Context, ev connectors.Event) {
	voter := approvals.Person{Platform: ev.Platform, ID: ev.User.ID, Groups: ev.User.Groups}
	if c.gate == nil {
		respond(ctx, c.out, ev, "Nobody can approve commands here; that button does nothing.")
		return
	}
	res, err := c.gate.Vote(ctx, ev.Value, voter, ev.ActionID)
	if err != nil {
		c.log.Error("vote", "request", ev.Value, "err", err)
		respond(ctx, c.out, ev, "Your vote could not be recorded (internal error); try again.")
		return
	}
	if res.Status != approvals.VoteDecided {
		respond(ctx, c.out, ev, voteMessage(res))
		if res.Status == approvals.VoteCounted {
			c.edit(ctx, ev, res.Approval)
		}
		return
	}
	if c.edit(ctx, ev, res.Approval) {
		c.store.MarkCardShown(ctx, res.Approval.ID)
	}
	// The turn that asked acts on the decision when it still waits;
	// after a restart nobody does, and the follow-up runs the command or
	// says why not.
	c.decided(ctx, res.Approval)
	if ev.Respond != nil {
		// Only where it can be private: the card and the thread show
		// the decision to everyone else.
		said := "You denied it: it will not run."
		if res.Approval.State == approvals.ApprovalApproved {
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
		if a.State == approvals.ApprovalExpired {
			return fmt.Sprintf("Too late: nobody decided by %s, so it expired and did not run; nothing changed.", approvals.FormatTime(a.DecidedAt))
		}
		return fmt.Sprintf("This request was already %s at %s; nothing changed.", decisionText(a), approvals.FormatTime(a.DecidedAt))
	case approvals.VoteDuplicate:
		return "You have already voted on this request; one vote per person."
	}
	return "Your vote was not counted: " + v.Reason
}

// edit shows a request's state on the card that was clicked, and says
// whether it does.
func (c *cards) edit(ctx context.Context, ev connectors.Event, a approvals.Approval) bool {
	conn, ok := c.out.conn(ev.Platform)
	if !ok {
		return false
	}
	if err := c.show(ctx, conn, ev.Ref, a); err != nil {
		c.log.Warn("update approval card", "id", a.ID, "err", err)
		return false
	}
	return true
}

// show edits a's card at ref to show its state, once that state is
// replicated (ha, Platforms.Replicate): a card never shows a decision a
// successor would not know. Until it is, the card stays as it was (the
// sweep shows it later), and a decision's follow-up says in its thread
// why its command did not run.
func (c *cards) show(ctx context.Context, conn connectors.Connector, ref connectors.Ref, a approvals.Approval) error {
	if r, ok := c.out.(interface{ replicated(context.Context) error }); ok {
		if err := r.replicated(ctx); err != nil {
			return fmt.Errorf("the replica is behind: %w", err)
		}
	}
	return editRetrying(ctx, conn, ref, c.message(a))
}
