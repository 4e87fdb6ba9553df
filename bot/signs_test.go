package bot

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
)

// signingConn is the fake platform with signs: it records the questions
// shown as taken and those whose sign was taken away.
type signingConn struct {
	*fakeConn
	mu          sync.Mutex
	acked, done []string
}

func (c *signingConn) Acknowledge(_ context.Context, ev connectors.Event) {
	c.mu.Lock()
	c.acked = append(c.acked, ev.Text)
	c.mu.Unlock()
	c.changed()
}

func (c *signingConn) Done(_ context.Context, ev connectors.Event) {
	c.mu.Lock()
	c.done = append(c.done, ev.Text)
	c.mu.Unlock()
	c.changed()
}

// changed wakes the test's waits, as a change to the messages does.
func (c *signingConn) changed() {
	c.fakeConn.mu.Lock()
	defer c.fakeConn.mu.Unlock()
	c.notify()
}

func (c *signingConn) signs() (acked, done []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.acked...), append([]string(nil), c.done...)
}

// A person's question is shown as taken once, and its sign taken away
// once its answer is finished.
func TestQuestionSignedUntilItsAnswerEnds(t *testing.T) {
	t.Parallel()
	sc := &signingConn{fakeConn: newFakeConn(webLimits)}
	sc.name = "web"
	dir := t.TempDir()
	b, stop := startBot(t, dir, sc, botOptions{model: scripted("nginx is up on web-1.", new([]agent.Request))})
	t.Cleanup(stop)
	h := &harness{t: t, bot: b, conn: sc.fakeConn, st: storeOf(b), dir: dir, stop: stop}
	h.say("alice", "t1", "is nginx up?")
	h.eventually("sign taken away", func() bool {
		_, done := sc.signs()
		return len(done) > 0
	})
	if !h.has("t1", "nginx is up on web-1.")() {
		t.Errorf("the sign went before the answer was shown: %s", h.dump())
	}
	acked, done := sc.signs()
	if len(acked) != 1 || acked[0] != "is nginx up?" || len(done) != 1 || done[0] != "is nginx up?" {
		t.Errorf("signs shown for %q, taken away for %q; want the question once each", acked, done)
	}
}

// A question's sign is a platform request like a post: with the fence
// closed (a deposed leader) neither the sign nor its removal reaches the
// platform; open, both do.
func TestSignsAskTheFence(t *testing.T) {
	sc := &signingConn{fakeConn: newFakeConn(webLimits)}
	p := NewPlatforms(nil, nil, sc)
	var closed atomic.Bool
	p.Fence(func() error {
		if closed.Load() {
			return errors.New("not the leader")
		}
		return nil
	})
	ts := &threads{out: p}
	q := queued{ev: connectors.Event{Kind: connectors.EventMessage, Platform: sc.Name(), Channel: "C1", Thread: "t1", Text: "is nginx up?"}}
	s, ok := ts.signerFor(q)
	if !ok {
		t.Fatal("no signer behind the wrapper")
	}
	closed.Store(true)
	s.Acknowledge(t.Context(), q.ev)
	s.Done(t.Context(), q.ev)
	if acked, done := sc.signs(); len(acked)+len(done) != 0 {
		t.Fatalf("with the fence closed: shown %q, taken away %q", acked, done)
	}
	closed.Store(false)
	s.Acknowledge(t.Context(), q.ev)
	s.Done(t.Context(), q.ev)
	if acked, done := sc.signs(); len(acked) != 1 || len(done) != 1 {
		t.Fatalf("with the fence open: shown %q, taken away %q; want one each", acked, done)
	}
}
