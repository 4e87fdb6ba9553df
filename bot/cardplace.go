package bot

import (
	"context"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// placeUnplaced finds the cards of decided requests whose place was never
// recorded — a crash came between the card's post and its record — where
// the platform can find them (connectors.ButtonFinder), and shows the
// decision on them; the rest are marked shown (never posted, or nowhere
// to be found). Before, such a card kept its Approve and Deny buttons
// for good (the kill loop's last 2 of 366).
func (c *cards) placeUnplaced(ctx context.Context) {
	as, err := c.store.UnplacedCards(ctx, 100)
	if err != nil {
		c.log.Warn("unplaced cards", "err", err)
		return
	}
	for _, a := range as {
		if c.place(ctx, a) {
			c.store.MarkCardShown(ctx, a.ID)
		}
	}
}

// place shows a's decision on its card if the card can be found; it
// reports whether a is done with (shown, or not to be found).
func (c *cards) place(ctx context.Context, a approvals.Approval) bool {
	if a.SessionID == 0 {
		return true
	}
	sess, err := c.sessions.Session(ctx, a.SessionID)
	if err != nil {
		return false
	}
	conn, ok := c.out.conn(sess.Platform)
	if !ok {
		return false // its platform is not configured now
	}
	finder, ok := buttonFinder(conn)
	if !ok {
		return true
	}
	d := connectors.Dest{Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel, Thread: sess.Thread}
	ref, found, err := finder.FindButton(ctx, d, ActionApprove, a.ID)
	if err != nil {
		c.log.Warn("find a decided card", "err", err)
		return false
	}
	if !found {
		return true
	}
	ref.Workspace = sess.Workspace
	if err := editRetrying(ctx, conn, ref, c.message(a)); err != nil {
		c.log.Warn("update a decided card", "err", err)
		return false
	}
	if err := c.store.SetApprovalCard(ctx, a.ID, ref.Channel, ref.ID); err != nil {
		c.log.Warn("record approval card", "err", err)
	}
	return true
}

// buttonFinder is c's ButtonFinder, behind the bot's redactor (finding
// reads, and shows nothing).
func buttonFinder(c connectors.Connector) (connectors.ButtonFinder, bool) {
	if rc, ok := c.(*redactedConn); ok {
		c = rc.Connector
	}
	f, ok := c.(connectors.ButtonFinder)
	return f, ok
}
