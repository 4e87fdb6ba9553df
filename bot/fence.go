package bot

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/opsbot/opsbot/connectors"
)

// postFence is the check every request of the Platforms that reaches a
// platform passes first (ha: the leadership); nil or unset lets all
// through. redactedConn asks it in each such method (a post, an edit, a
// stream, a status, a task card, a plan block), and recovery's enders
// ask it through cutEnderOf and unrecordedEnderOf.
type postFence struct {
	check atomic.Pointer[func() error]
	sync  atomic.Pointer[func(context.Context) error]
}

// beforeButtons returns once what the bot recorded is off this machine,
// where it is replicated (Platforms.Replicate): a message with a button
// that decides (an approval card's, a plan step's) is shown only once
// what it stands for would survive the loss of this machine. Stop and
// "Ask again" buttons stand for nothing recorded: an answer shows them
// while the replica is behind.
func (f *postFence) beforeButtons(ctx context.Context, m connectors.Message) error {
	if f == nil || !slices.ContainsFunc(m.Buttons, decides) {
		return nil
	}
	if fn := f.sync.Load(); fn != nil {
		return (*fn)(ctx)
	}
	return nil
}

// decides says whether a click on b decides something on record.
func decides(b connectors.Button) bool {
	switch b.ActionID {
	case ActionStop, ActionAskAgain:
		return false
	}
	return true
}

// err is why nothing may reach a platform now, or nil.
func (f *postFence) err() error {
	if f == nil {
		return nil
	}
	if fn := f.check.Load(); fn != nil {
		return (*fn)()
	}
	return nil
}

// Fence has every request that reaches a platform (a post, an edit, a
// stream, a status, a task card, a plan block, recovery's note on a cut
// answer) ask check first: while it returns an error nothing reaches the
// platform and the caller gets that error. In ha, check is the
// leadership: a deposed leader posts nothing its successor may post
// again.
func (p *Platforms) Fence(check func() error) { p.fence.check.Store(&check) }

// Replicate has every post or edit that carries buttons wait until sync
// has copied what the bot recorded off this machine (ha with a replicated
// database): an approval card a person sees is never one a successor
// does not know.
func (p *Platforms) Replicate(sync func(context.Context) error) { p.fence.sync.Store(&sync) }

// replicated returns once what the bot recorded is off this machine
// (Platforms.Replicate), nil at once without replication: a card shows
// a decision only once the decision would survive the machine.
func (p *Platforms) replicated(ctx context.Context) error {
	if p.fence == nil {
		return nil
	}
	if fn := p.fence.sync.Load(); fn != nil {
		return (*fn)(ctx)
	}
	return nil
}

// fenced is ref and the fence's error, for the Post-shaped methods.
func fenced(f *postFence) (connectors.Ref, error) { return connectors.Ref{}, f.err() }

// cutEnderOf is the cutEnder behind c's redactor, asking the fence first.
func cutEnderOf(c connectors.Connector) (cutEnder, bool) {
	rc, wrapped := c.(*redactedConn)
	if !wrapped {
		e, ok := c.(cutEnder)
		return e, ok
	}
	e, ok := rc.Connector.(cutEnder)
	if !ok {
		return nil, false
	}
	return fencedEnder{cut: e, fence: rc.fence}, true
}

// unrecordedEnderOf is the unrecordedEnder behind c's redactor, asking
// the fence first.
func unrecordedEnderOf(c connectors.Connector) (unrecordedEnder, bool) {
	rc, wrapped := c.(*redactedConn)
	if !wrapped {
		e, ok := c.(unrecordedEnder)
		return e, ok
	}
	e, ok := rc.Connector.(unrecordedEnder)
	if !ok {
		return nil, false
	}
	return fencedEnder{unrecorded: e, fence: rc.fence}, true
}

// fencedEnder is one of recovery's enders behind the fence. The record
// it ends was redacted before it was shown, so it needs no redactor.
type fencedEnder struct {
	cut        cutEnder
	unrecorded unrecordedEnder
	fence      *postFence
}

// EndCut ends a cut answer, unless the fence is closed.
func (f fencedEnder) EndCut(ctx context.Context, ref connectors.Ref, stored, note string) error {
	if err := f.fence.err(); err != nil {
		return err
	}
	return f.cut.EndCut(ctx, ref, stored, note)
}

// EndCutIn ends an unrecorded cut answer, unless the fence is closed.
func (f fencedEnder) EndCutIn(ctx context.Context, d connectors.Dest, note string) (bool, error) {
	if err := f.fence.err(); err != nil {
		return false, err
	}
	return f.unrecorded.EndCutIn(ctx, d, note)
}
