package bot

import (
	"context"

	"github.com/opsbot/opsbot/connectors"
)

// A person's question gets a sign that it is taken as soon as it is
// queued, whatever the queue of its answer (at 20 answers at once Slack's
// streams start half a minute apart): the Slack connector shows its
// status or a reaction, and takes it away when the question's turn ends.

// signer is a connector that shows at once that a question is taken,
// until Done (the Slack connector).
type signer interface {
	Acknowledge(ctx context.Context, ev connectors.Event)
	Done(ctx context.Context, ev connectors.Event)
}

// signerFor is the signer of q's platform, for a person's question not
// yet shown as taken (a message a previous process took may be).
func (ts *threads) signerFor(q queued) (signer, bool) {
	if q.followUp != "" || q.jobEnd || q.replayed || q.hold != nil || q.ev.Kind != connectors.EventMessage || ts.out == nil {
		return nil, false
	}
	c, ok := ts.out.conn(q.ev.Platform)
	rc, wrapped := c.(*redactedConn)
	if wrapped {
		c = rc.Connector
	}
	s, is := c.(signer)
	if is && wrapped {
		s = fencedSigner{s, rc.fence}
	}
	return s, ok && is
}

// fencedSigner shows and takes away signs only while the fence is open:
// a reaction or a status is a platform request like a post.
type fencedSigner struct {
	signer
	fence *postFence
}

// Acknowledge is the signer's, unless the fence is closed.
func (f fencedSigner) Acknowledge(ctx context.Context, ev connectors.Event) {
	if f.fence.err() == nil {
		f.signer.Acknowledge(ctx, ev)
	}
}

// Done is the signer's, unless the fence is closed.
func (f fencedSigner) Done(ctx context.Context, ev connectors.Event) {
	if f.fence.err() == nil {
		f.signer.Done(ctx, ev)
	}
}

// acknowledge shows q's question as taken, in the background; it
// returns what is closed once it is shown (nil: no sign).
func (ts *threads) acknowledge(q queued) chan struct{} {
	s, ok := ts.signerFor(q)
	if !ok {
		return nil
	}
	signed := make(chan struct{})
	if !ts.crew.goOK(func() {
		defer close(signed)
		s.Acknowledge(ts.out.lifeCtx(context.Background()), q.ev)
	}) {
		return nil
	}
	return signed
}

// signDone takes q's sign away, once it is shown, in the background.
func (ts *threads) signDone(q queued) {
	s, ok := ts.signerFor(q)
	if !ok || q.signed == nil {
		return
	}
	ts.crew.do(func() {
		<-q.signed
		s.Done(ts.out.lifeCtx(context.Background()), q.ev)
	})
}
