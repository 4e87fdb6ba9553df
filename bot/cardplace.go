package bot

import (
	"context"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
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

// postUncarded gives each pending request an earlier process opened, and
// whose card's place it never recorded, its card: the process died
// between the request and its card's post, or between the post and its
// record (a leader's pod killed a second after the request: issue 34). A
// card the platform can find in the thread is recorded where it is; any
// other is posted again, so a request that can be approved shows an
// Approve button. Requests this process opened are its own turns' to
// post.
func (c *cards) postUncarded(ctx context.Context) {
	as, err := c.store.UncardedPending(ctx, c.since, 100)
	if err != nil {
		c.log.Warn("requests without a card", "err", err)
		return
	}
	for _, a := range as {
		if a.SessionID == 0 {
			continue // no thread to show it in: `opsbot approvals` does
		}
		sess, conn, ok := c.threadOf(ctx, a)
		if !ok {
			continue
		}
		d := connectors.Dest{Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel, Thread: sess.Thread}
		if finder, ok := buttonFinder(conn); ok {
			ref, found, err := finder.FindButton(ctx, d, ActionApprove, a.ID)
			if err != nil {
				c.log.Warn("find a request's card", "err", err)
				continue
			}
			if found {
				if err := c.store.SetApprovalCard(ctx, a.ID, ref.Channel, ref.ID); err != nil {
					c.log.Warn("record approval card", "err", err)
				}
				continue
			}
		}
		ref, err := c.out.post(ctx, d, c.message(a))
		if err != nil {
			c.log.Warn("post a request's card again", "err", err)
			continue // the next sweep tries again
		}
		if err := c.store.SetApprovalCard(ctx, a.ID, ref.Channel, ref.ID); err != nil {
			c.log.Warn("record approval card", "err", err)
		}
		c.log.Info("posted the card of a request the last process opened and did not show", "host", a.Host)
	}
}

// threadOf is the session a's card is shown in and its platform; ok is
// false when either is not there now (its platform is not configured).
func (c *cards) threadOf(ctx context.Context, a approvals.Approval) (store.Session, connectors.Connector, bool) {
	sess, err := c.sessions.Session(ctx, a.SessionID)
	if err != nil {
		return sess, nil, false
	}
	conn, ok := c.out.conn(sess.Platform)
	return sess, conn, ok
}

// place shows a's decision on its card if the card can be found; it
// reports whether a is done with (shown, or not to be found).
func (c *cards) place(ctx context.Context, a approvals.Approval) bool {
	if a.SessionID == 0 {
		return true
	}
	sess, conn, ok := c.threadOf(ctx, a)
	if !ok {
		return false
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
	if err := c.show(ctx, conn, ref, a); err != nil {
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
