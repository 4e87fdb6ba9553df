package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

// echo answers with the question it was asked.
func echo(_ context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
	q := req.Messages[len(req.Messages)-1].Content[0].Text
	yield(agent.StreamEvent{Kind: agent.EventText, Text: "answer to " + q})
	yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
}

type step = func(context.Context, agent.Request, func(agent.StreamEvent) bool)

func steps(first step, then step, n int) []step {
	out := []step{first}
	for range n {
		out = append(out, then)
	}
	return out
}

// position is the place of the first message of any thread containing s
// in the order messages were posted, or -1.
func (h *harness) position(s string) int {
	h.conn.mu.Lock()
	defer h.conn.mu.Unlock()
	for i, id := range h.conn.order {
		if strings.Contains(h.conn.msgs[id].msg.Text, s) {
			return i
		}
	}
	return -1
}

// TestThreadQueueIsBoundedAndTellsTheOverflow: with the default
// bot.max_queue (10), 15 messages behind a running answer queue 10, and
// the other 5 are each answered that the thread is busy; none vanishes.
func TestThreadQueueIsBoundedAndTellsTheOverflow(t *testing.T) {
	t.Parallel()
	// 11 answers: the Stop's summary of the first, and the 10 queued.
	h := newHarness(t, approvals.GateConfig{}, &model{steps: steps(blockUntilCancelled, echo, 11)})
	h.say("alice", "t1", "first")
	h.eventually("the first answer to start", h.has("t1", "Working on it"))
	for i := range 15 {
		h.say("alice", "t1", fmt.Sprintf("q%d", i))
	}
	h.eventually("15 replies", func() bool {
		return h.count("t1", queuedNote)+h.count("t1", "this thread is busy") == 15
	})
	if q, busy := h.count("t1", queuedNote), h.count("t1", "Not taken: this thread is busy: 10 messages already wait"); q != 10 || busy != 5 {
		t.Fatalf("%d queued and %d turned away as busy; want 10 and 5:%s", q, busy, h.dump())
	}
	if got := h.bot.Queues(); got.Queued != 10 || got.Deepest != 10 || got.Running != 1 {
		t.Errorf("Queues() = %+v; want 10 queued in one thread, 1 running", got)
	}
	if why := h.bot.Full("web", "ops", "t1"); !strings.Contains(why, "busy") {
		t.Errorf("Full says %q for a thread whose queue is full", why)
	}
	first, ref, _ := h.find("t1", "Working on it")
	h.click("alice", first, ref, ActionStop)
	for i := range 10 {
		h.eventually(fmt.Sprintf("the answer to q%d", i), h.has("t1", fmt.Sprintf("answer to q%d", i)))
	}
	for i := 10; i < 15; i++ {
		if _, _, ok := h.find("t1", fmt.Sprintf("answer to q%d", i)); ok {
			t.Errorf("q%d was turned away and yet answered", i)
		}
	}
}

// TestTurnsAreCappedAndServedInTurn: with bot.max_turns 1, a second
// thread waits while the first runs, and once the first thread's answer
// ends the second thread goes next, before the first thread's queued
// message: a deep queue cannot starve another thread.
func TestTurnsAreCappedAndServedInTurn(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{limits: func(c *Config) { c.MaxTurns = 1 }, model: &model{steps: steps(blockUntilCancelled, echo, 5)}})
	h.say("alice", "a", "a1")
	h.eventually("a1 to start", h.has("a", "Working on it"))
	h.say("alice", "a", "a2")
	h.say("bob", "b", "b1")
	h.say("alice", "a", "a3")
	// The inbox routes in order: a3's note means b1 was routed before it.
	h.eventually("a3's queued note", func() bool { return h.count("a", queuedNote) == 2 })
	// b1 counts as queued until b's worker takes it to wait for a slot.
	if got := h.bot.Queues(); got.Running != 1 || got.Waiting != 1 || got.Deepest != 2 || got.Queued < 2 || got.Queued > 3 {
		t.Fatalf("Queues() = %+v; want 1 thread running, 1 waiting for its turn, a's 2 messages queued", got)
	}
	if _, _, ok := h.find("b", "answer to b1"); ok {
		t.Fatal("b1 was answered while the only turn was taken")
	}
	first, ref, _ := h.find("a", "Working on it")
	h.click("alice", first, ref, ActionStop)
	h.eventually("a3's answer", h.has("a", "answer to a3"))
	b1, a2 := h.position("answer to b1"), h.position("answer to a2")
	if b1 < 0 || b1 > a2 {
		t.Errorf("b1 answered at %d, a2 at %d: the waiting thread should go before a2:%s", b1, a2, h.dump())
	}
}

// TestTooManyWaitingThreadsAreTurnedAway: with one turn and room for one
// waiting thread, a third thread is told opsbot is busy; the second one
// is still answered.
func TestTooManyWaitingThreadsAreTurnedAway(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{limits: func(c *Config) { c.MaxTurns, c.MaxWaiting = 1, 1 }, model: &model{steps: steps(blockUntilCancelled, echo, 5)}})
	h.say("alice", "a", "a1")
	h.eventually("a1 to start", h.has("a", "Working on it"))
	h.say("bob", "b", "b1")
	h.say("carol", "c", "c1")
	h.eventually("c1 turned away", h.has("c", "Not taken: opsbot is busy: 1 conversations already wait"))
	if why := h.bot.Full("web", "ops", "d"); why == "" {
		t.Error("Full says a new thread would be taken while the waiting room is full")
	}
	first, ref, _ := h.find("a", "Working on it")
	h.click("alice", first, ref, ActionStop)
	h.eventually("b1's answer", h.has("b", "answer to b1"))
	if _, _, ok := h.find("c", "answer to c1"); ok {
		t.Error("c1 was turned away and yet answered")
	}
}

// Messages still queued at a restart were told "queued" when they came:
// the next start answers them without telling them so again (issue 28
// item 10: each was told a second time).
func TestQueuedNoteIsNotRepeatedAfterARestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local sleep 30")
	h.eventually("the run to start", h.has("t1", "running `sleep 30`"))
	h.say("alice", "t1", "help")
	h.say("alice", "t1", "help")
	h.eventually("two queued notes", func() bool { return h.count("t1", queuedNote) == 2 })
	h.restart(botOptions{})
	h.eventually("both answered after the restart", func() bool { return h.count("t1", "`help` — this text") == 2 })
	if n := h.count("t1", queuedNote); n != 2 {
		t.Errorf("%d queued notes; want the 2 told when the messages came:%s", n, h.dump())
	}
}
