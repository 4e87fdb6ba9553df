package slack

import (
	"context"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// Signs that a question is taken. An answer's first words come with its
// stream, and chat.startStream is Tier 2 for the whole workspace: at 20
// questions at once the last waits half a minute for it. So each
// question gets a sign of its own at once, from other budgets: in an
// assistant thread the status under it (assistant.threads.setStatus,
// Tier 3), saying what runs and kept fresh before Slack clears it (two
// minutes); elsewhere a reaction on the question (reactions.add, Tier
// 3), removed when its answer ends (reactions.remove, Tier 2). Both are
// courtesies: a workspace without the scope refuses them, and the answer
// is the same.

const (
	// seenReaction is the reaction a question gets while it is answered.
	seenReaction = "eyes"
	// statusGap is the least time between two statuses of one thread:
	// Tier 3 is shared by every thread of the workspace.
	statusGap = 3 * time.Second
	// statusRefresh is how often a status is shown again while its
	// turn runs: Slack clears it after two minutes.
	statusRefresh = 100 * time.Second
	// signLimit bounds a sign's call, and the wait of a reaction's
	// removal for its budget.
	signLimit = 2 * time.Minute
)

// signs are the questions being answered: a status by channel/thread
// (held by every question of the thread being answered), a reaction by
// channel@question.
type signs struct {
	mu       sync.Mutex
	byThread map[string]*sign
}

// sign is one question's: a status kept fresh by its keeper goroutine, or
// a reaction.
type sign struct {
	d        connectors.Dest
	reaction *connectors.Ref // the question reacted to; nil for a status
	held     int             // the questions a status is shown for
	want     string          // the status to show
	shown    string
	at       time.Time // the last setStatus
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

// Acknowledge shows at once that ev's question is taken: the status in an
// assistant thread, a reaction elsewhere. Done takes it away.
func (c *Connector) Acknowledge(ctx context.Context, ev connectors.Event) {
	if ev.Kind != connectors.EventMessage || ev.Thread == "" {
		return
	}
	d := connectors.Dest{Platform: Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread}
	if known, _ := c.threads.Known(ctx, ev.Channel, ev.Thread); known {
		c.keepStatus(d, thinkingStatus)
		return
	}
	if ev.Ref.ID == "" || !c.bud.allow(c.team(), "reactions.add", ev.Channel) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, lookupLimit)
	defer cancel()
	ref := ev.Ref
	err := c.api.AddReactionContext(ctx, seenReaction, slack.NewRefToMessage(ref.Channel, ref.ID))
	if err := c.bud.limited(c.team(), "reactions.add", ev.Channel, err); err != nil {
		c.log.Debug("slack: question not marked as taken", "channel", ev.Channel, "code", errorCode(err))
		return
	}
	c.marks.mu.Lock()
	defer c.marks.mu.Unlock()
	c.marks.byThread[ref.Channel+"@"+ref.ID] = &sign{d: d, reaction: &ref}
}

// thinkingStatus is the status of an assistant thread until a command
// runs.
const thinkingStatus = "is thinking…"

// Working shows status ("is running `df -h` on web-1…") under d's
// thread while its question is answered, where the thread shows one (an
// assistant thread acknowledged): within statusGap of the last, kept
// fresh until Done.
func (c *Connector) Working(d connectors.Dest, status string) {
	c.marks.mu.Lock()
	defer c.marks.mu.Unlock()
	s := c.marks.byThread[d.Channel+"/"+d.Thread]
	if s == nil || s.reaction != nil || status == "" {
		return
	}
	s.want = status
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// keptStatus reports whether d's thread shows a status kept by its
// keeper (Acknowledge in an assistant thread): its statuses then go
// through Working, within statusGap of each other.
func (c *Connector) keptStatus(d connectors.Dest) bool {
	c.marks.mu.Lock()
	defer c.marks.mu.Unlock()
	s := c.marks.byThread[d.Channel+"/"+d.Thread]
	return s != nil && s.reaction == nil
}

// taskSign is a task card's status in its thread: what runs while it
// runs.
func (c *Connector) taskSign(ref connectors.Ref, t connectors.Task) {
	switch t.Status {
	case connectors.TaskInProgress:
		c.Working(ref.Dest(), "is running "+truncate(t.Title, 120)+"…")
	case connectors.TaskComplete, connectors.TaskError:
		c.Working(ref.Dest(), thinkingStatus)
	}
}

// cardsSign is the sign of a message's cards (Message.Tasks): what the
// newest one still running runs, else that the bot thinks on.
func (c *Connector) cardsSign(ref connectors.Ref, tasks []connectors.Task) {
	for i := len(tasks) - 1; i >= 0; i-- {
		if tasks[i].Status == connectors.TaskInProgress {
			c.taskSign(ref, tasks[i])
			return
		}
	}
	if len(tasks) > 0 {
		c.taskSign(ref, tasks[len(tasks)-1])
	}
}

// Done takes ev's sign away as its answer ended: the status is cleared,
// the reaction removed (waiting for its budget, Tier 2, within
// signLimit).
func (c *Connector) Done(ctx context.Context, ev connectors.Event) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signLimit)
	defer cancel()
	if s := c.marks.release(ev.Channel + "/" + ev.Thread); s != nil {
		close(s.stop)
		<-s.done
		c.setStatus(ctx, s.d, "")
		return
	}
	s := c.marks.take(ev.Channel + "@" + ev.Ref.ID)
	if s == nil {
		return
	}
	const method = "reactions.remove"
	if c.bud.wait(ctx, c.team(), method, s.d.Channel) != nil {
		return
	}
	err := c.api.RemoveReactionContext(ctx, seenReaction, slack.NewRefToMessage(s.reaction.Channel, s.reaction.ID))
	if err := c.bud.limited(c.team(), method, s.d.Channel, err); err != nil {
		c.log.Debug("slack: question's mark not removed", "channel", s.d.Channel, "code", errorCode(err))
	}
}

// keepStatus starts d's status and its keeper, or holds the one its
// thread shows for another question.
func (c *Connector) keepStatus(d connectors.Dest, status string) {
	c.marks.mu.Lock()
	defer c.marks.mu.Unlock()
	k := d.Channel + "/" + d.Thread
	if s := c.marks.byThread[k]; s != nil {
		s.held++
		return
	}
	s := &sign{d: d, want: status, held: 1, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	c.marks.byThread[k] = s
	go c.keep(s)
}

// keep shows s's status as it changes, at most once a statusGap, and
// again before Slack clears it, until s stops.
func (c *Connector) keep(s *sign) {
	defer close(s.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-c.life().Done():
			return
		case <-s.kick:
		case <-t.C:
		}
		t.Reset(c.statusStep(s, time.Now()))
	}
}

// statusStep shows s's status if it is due, and says when to look again.
func (c *Connector) statusStep(s *sign, now time.Time) time.Duration {
	c.marks.mu.Lock()
	want, since := s.want, now.Sub(s.at)
	fresh := want == s.shown && !s.at.IsZero()
	c.marks.mu.Unlock()
	switch {
	case since < statusGap:
		return statusGap - since
	case fresh && since < statusRefresh:
		return statusRefresh - since
	}
	ctx, cancel := context.WithTimeout(c.life(), lookupLimit)
	defer cancel()
	tried, ok := c.setStatus(ctx, s.d, want)
	if !tried {
		return statusGap // the budget is spent: a little later
	}
	c.marks.mu.Lock()
	defer c.marks.mu.Unlock()
	s.at = now
	if !ok {
		return statusRefresh // Slack refused (no scope?): not again soon
	}
	s.shown = want
	if s.want != want {
		return statusGap
	}
	return statusRefresh
}

// setStatus shows status under d's thread within the method's budget,
// never waiting for it; it reports whether the budget let it try, and
// whether Slack took it.
func (c *Connector) setStatus(ctx context.Context, d connectors.Dest, status string) (tried, ok bool) {
	const method = "assistant.threads.setStatus"
	if !c.bud.allow(c.team(), method, d.Channel) {
		return false, false
	}
	err := c.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: d.Channel, ThreadTS: d.Thread, Status: status})
	if err := c.bud.limited(c.team(), method, d.Channel, err); err != nil {
		c.log.Debug("slack: status not shown", "channel", d.Channel, "code", errorCode(err))
		return true, false
	}
	return true, true
}

// release lets go of thread k's status for one question, and returns it
// once no question holds it.
func (g *signs) release(k string) *sign {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.byThread[k]
	if s == nil {
		return nil
	}
	if s.held--; s.held > 0 {
		return nil
	}
	delete(g.byThread, k)
	return s
}

// take removes and returns the sign k.
func (g *signs) take(k string) *sign {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.byThread[k]
	delete(g.byThread, k)
	return s
}
