package bot

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// queuedNotice finds the thread's queued notice (its first message that
// ever said "queued:"): the message and everything it showed.
func (h *harness) queuedNotice(thread string) (*fakeMsg, connectors.Ref, bool) {
	for _, m := range h.conn.thread(thread) {
		if strings.HasPrefix(m.history[0], "queued: ") {
			_, ref, _ := h.find(thread, m.msg.Text)
			return m, ref, true
		}
	}
	return nil, connectors.Ref{}, false
}

// notices counts the thread's messages that were posted as queued notices.
func (h *harness) notices(thread string) int {
	n := 0
	for _, m := range h.conn.thread(thread) {
		if strings.HasPrefix(m.history[0], "queued: ") {
			n++
		}
	}
	return n
}

func (h *harness) noticeShows(thread, text string) func() bool {
	return func() bool {
		m, _, ok := h.queuedNotice(thread)
		return ok && m.msg.Text == text
	}
}

// Threads waiting for a turn slot (issue 28 item 5) are told at once where
// they are in line, with a Stop button; the notice follows the line, says
// "started" when the turn starts, and a Stop takes the thread out of the
// line and says so in the notice; nothing of the stopped message runs.
func TestWaitingThreadsAreToldTheirPlaceAndMayStop(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{limits: func(c *Config) { c.MaxTurns = 1 }})
	h.say("alice", "a", "run local sleep 30")
	h.eventually("a's run", h.has("a", "running `sleep 30`"))
	h.say("bob", "b", "run local sleep 30")
	h.eventually("b's notice", h.noticeShows("b", queuedText(0)))
	h.say("carol", "c", "help")
	h.eventually("c's notice", h.noticeShows("c", queuedText(1)))
	if n, _, _ := h.queuedNotice("c"); len(n.msg.Buttons) != 1 || n.msg.Buttons[0].ActionID != ActionStop {
		t.Fatalf("c's notice has buttons %+v; want Stop", n.msg.Buttons)
	}

	h.say("alice", "a", "stop")
	h.eventually("b's turn", h.has("b", "running `sleep 30`"))
	h.eventually("b's notice to say started", h.noticeShows("b", queuedStartedText))
	h.eventually("c to move up", h.noticeShows("c", queuedText(0)))
	if b, _, _ := h.queuedNotice("b"); len(b.msg.Buttons) != 0 {
		t.Errorf("b's started notice keeps buttons %+v", b.msg.Buttons)
	}

	c, ref, _ := h.queuedNotice("c")
	if said := h.click("carol", c, ref, ActionStop); said != "Stopped." {
		t.Errorf("the Stop click was answered %q", said)
	}
	h.eventually("c's notice to say stopped", h.noticeShows("c", "Stopped by @carol before it started; nothing ran."))
	h.say("bob", "b", "stop")
	h.eventually("b's run to end", h.has("b", "stopped by @bob"))
	if h.has("c", "`help` — this text")() {
		t.Errorf("c's message ran after its Stop:%s", h.dump())
	}
	if got := h.bot.Queues(); got.Waiting != 0 {
		t.Errorf("Queues() = %+v after the stop; want none waiting", got)
	}
}

// A message waiting for its slot at a shutdown has its notice say so; the
// next start runs it without posting another notice, and its notice then
// says it started.
func TestWaitingNoticeIsNotRepeatedAfterARestart(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{limits: func(c *Config) { c.MaxTurns = 1 }})
	h.say("alice", "a", "run local sleep 30")
	h.eventually("a's run", h.has("a", "running `sleep 30`"))
	h.say("bob", "b", "help")
	h.eventually("b's notice", h.noticeShows("b", queuedText(0)))
	h.restart(botOptions{limits: func(c *Config) { c.MaxTurns = 1 }})
	h.eventually("b's answer after the restart", h.has("b", "`help` — this text"))
	h.eventually("b's notice to say it started", h.noticeShows("b", queuedStartedText))
	if n, _, _ := h.queuedNotice("b"); !slices.Contains(n.history, queuedRestartText) {
		t.Errorf("b's notice showed %q; want the restart said", n.history)
	}
	if n := h.notices("b"); n != 1 {
		t.Errorf("%d queued notices in b; want the 1 posted before the restart:%s", n, h.dump())
	}
}

// After a kill -9 (nothing the old process does reaches the platform
// any more), the next start takes over the notices it left, kept with
// their messages in the database: each is edited to "started" (to its
// new place first, when the board has the time), and none keeps the
// number the killed process showed, nor is a second notice posted.
func TestWaitingNoticesAreTakenOverAfterACrash(t *testing.T) {
	t.Parallel()
	one := botOptions{limits: func(c *Config) { c.MaxTurns = 1 }}
	h := newHarnessWith(t, one)
	h.say("alice", "a", "run local sleep 30")
	h.eventually("a's run", h.has("a", "running `sleep 30`"))
	h.say("bob", "b", "help")
	h.eventually("b's notice", h.noticeShows("b", queuedText(0)))
	h.say("carol", "c", "help")
	h.eventually("c's notice", h.noticeShows("c", queuedText(1)))
	h.conn.mu.Lock()
	h.conn.down = true
	h.conn.mu.Unlock()
	h.stop()
	h.conn.mu.Lock()
	h.conn.down = false
	h.conn.mu.Unlock()

	h.bot, h.stop = startBot(t, h.dir, h.conn, one)
	t.Cleanup(h.stop)
	h.eventually("b's answer after the crash", h.has("b", "`help` — this text"))
	h.eventually("b's notice to say it started", h.noticeShows("b", queuedStartedText))
	h.eventually("c's answer after the crash", h.has("c", "`help` — this text"))
	h.eventually("c's notice to say it started", h.noticeShows("c", queuedStartedText))
	for _, th := range []string{"b", "c"} {
		if n := h.notices(th); n != 1 {
			t.Errorf("%d queued notices in %s; want the 1 posted before the crash:%s", n, th, h.dump())
		}
	}
}

// When the line moves faster than the platform takes edits, the notices
// are edited at the board's pace, nearest the front first, skipping the
// numbers they had no turn to show: no edit is refused, far fewer are
// made than the line's moves, and each notice ends showing its place.
func TestQueuedNoticesCoalesceWithinThePlatformsLimits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(connectors.Limits{MaxText: 4000, EditInterval: time.Second, EditsPerMinute: 50})
		out := NewPlatforms(nil, slog.New(slog.DiscardHandler), conn)
		slots := newTurnSlots(1)
		board := newQueueBoard(slots, out, &crew{})
		ctx := context.Background()
		slots.join() // the one slot, taken
		const waiting = 30
		var places []chan struct{}
		var notices []*queuedNotice
		for i := range waiting {
			ev := connectors.Event{Platform: "fake", Channel: "ops", Thread: fmt.Sprintf("t%d", i)}
			places = append(places, slots.join())
			notices = append(notices, board.post(ctx, ev, places[i]))
		}
		// The first 20 get their turn one after another, a second apart.
		for i := range 20 {
			slots.release()
			<-places[i]
			board.end(ctx, notices[i], queuedStartedText)
			time.Sleep(time.Second)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		conn.mu.Lock()
		limited, edits := conn.limited, 0
		for _, q := range conn.requests {
			if q.kind == "edit" {
				edits++
			}
		}
		conn.mu.Unlock()
		if limited != 0 {
			t.Errorf("%d edits were refused for rate", limited)
		}
		// 20 ends, and 10 notices that moved 20 places each: 200 moves.
		if moves := edits - 20; moves > 60 {
			t.Errorf("%d notice edits for the line's 200 moves; want them coalesced", moves)
		}
		for i, qn := range notices[20:] {
			if got, want := conn.msgs[qn.ref.ID].msg.Text, queuedText(i); got != want {
				t.Errorf("notice %d shows %q; want %q", 20+i, got, want)
			}
		}
		for _, qn := range notices[20:] {
			board.end(ctx, qn, queuedStartedText)
		}
		if !slices.Equal(conn.msgs[notices[0].ref.ID].history[1:], []string{queuedStartedText}) {
			t.Errorf("the first notice showed %q; want only its start after its post", conn.msgs[notices[0].ref.ID].history)
		}
	})
}
