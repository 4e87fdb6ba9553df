package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/anthropic"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/openai"
)

// fakeTimers is the idle timeout's clock, moved by the test: Fire runs
// the timers that are set, as if their time had passed.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
	resets int
}

type fakeTimer struct {
	clock *fakeTimers
	f     func()
	set   bool
	d     time.Duration
}

func (c *fakeTimers) after(d time.Duration, f func()) streamretry.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, f: f, set: true, d: d}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.set
	t.set, t.d = true, d
	t.clock.resets++
	return was
}

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.set
	t.set = false
	return was
}

// Fire runs every set timer and returns how long they were set for.
func (c *fakeTimers) Fire() []time.Duration {
	c.mu.Lock()
	var due []*fakeTimer
	var ds []time.Duration
	for _, t := range c.timers {
		if t.set {
			t.set = false
			due, ds = append(due, t), append(ds, t.d)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return ds
}

// stallProvider is w's provider in front of f, with the idle timeout's
// clock in the test's hands and its default of 60s.
func stallProvider(t *testing.T, w wire, f *testfake.Server, clock *fakeTimers) agent.Provider {
	sleep := (&testfake.Sleeps{}).Sleep
	var p agent.Provider
	var err error
	if w.name == "anthropic" {
		p, err = anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: f.URL, Model: "claude-test-1"},
			anthropic.WithSleep(sleep), anthropic.WithIdleTimers(clock.after))
	} else {
		p, err = openai.New(openai.Config{APIKey: "sk-test", BaseURL: f.URL + "/v1", Model: "gpt-test-1"},
			openai.WithSleep(sleep), openai.WithIdleTimers(clock.after))
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fireWhenHeld fires the clock each time one of held closes, in order.
func fireWhenHeld(t *testing.T, clock *fakeTimers, held ...chan struct{}) {
	go func() {
		for _, h := range held {
			<-h
			if ds := clock.Fire(); len(ds) != 1 || ds[0] != 60*time.Second {
				t.Errorf("timers fired = %v; want one of 60s", ds)
			}
		}
	}()
}

// A server that sends no headers for 60s is asked again, once, and the
// answer of the second call is the turn's.
func TestStalledHeadersAreRetriedOnce(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		held := make(chan struct{})
		f := testfake.NewServer(t, w.noReply, testfake.Reply{HoldHeaders: true, Held: held},
			testfake.Reply{Raw: w.sse(testfake.Say("web-1 is up.")), Once: true})
		clock := &fakeTimers{}
		fireWhenHeld(t, clock, held)
		a := &agent.Agent{Provider: stallProvider(t, w, f, clock), Tools: agent.NewRegistry(), History: agent.NewMemoryHistory()}
		rec := &testfake.Recorder{}
		if err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "is web-1 up?", rec.Emit); err != nil {
			t.Fatalf("the turn failed: %v", err)
		}
		if rec.Text() != "web-1 is up." || len(f.Requests()) != 2 {
			t.Errorf("answer %q after %d requests; want the second call's answer", rec.Text(), len(f.Requests()))
		}
	})
}

// A server that stalls twice before sending anything ends the turn with
// words: nothing for 60s, tried twice.
func TestStalledTwiceEndsWithWords(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		held1, held2 := make(chan struct{}), make(chan struct{})
		f := testfake.NewServer(t, w.noReply, testfake.Reply{HoldHeaders: true, Held: held1}, testfake.Reply{HoldHeaders: true, Held: held2})
		clock := &fakeTimers{}
		fireWhenHeld(t, clock, held1, held2)
		a := &agent.Agent{Provider: stallProvider(t, w, f, clock), Tools: agent.NewRegistry(), History: agent.NewMemoryHistory()}
		err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "is web-1 up?", (&testfake.Recorder{}).Emit)
		if err == nil || !strings.Contains(err.Error(), "sent nothing for 60s (tried 2 times)") {
			t.Errorf("err = %v; want the stall worded", err)
		}
		if n := len(f.Requests()); n != 2 {
			t.Errorf("%d requests; want 2 (one retry)", n)
		}
	})
}

// A stream that stops mid-answer for 60s is not retried (the text is on
// screen): the turn ends saying the model stopped sending, the text kept.
func TestStalledMidAnswerEndsWithWords(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		// After the first text delta: anthropic sends message_start and
		// content_block_start before it, openai one role chunk.
		holdAfter := map[string]int{"anthropic": 3, "openai": 2}[w.name]
		f := testfake.NewServer(t, w.noReply, testfake.Reply{Raw: w.sse(testfake.Say("web-1 is", " up.")), HoldAfter: holdAfter, Once: true})
		clock := &fakeTimers{}
		a := &agent.Agent{Provider: stallProvider(t, w, f, clock), Tools: agent.NewRegistry(), History: agent.NewMemoryHistory()}
		rec := &testfake.Recorder{On: func(ev agent.Event) {
			if ev.Kind == agent.TextDelta {
				clock.Fire() // no event comes after this one
			}
		}}
		err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "is web-1 up?", rec.Emit)
		if err == nil || !strings.Contains(err.Error(), "the model stopped sending for 60s; the text so far is kept") {
			t.Errorf("err = %v; want the stall worded", err)
		}
		if rec.Text() != "web-1 is" || len(f.Requests()) != 1 {
			t.Errorf("text %q after %d requests; want the text shown kept, no retry", rec.Text(), len(f.Requests()))
		}
		clock.mu.Lock()
		defer clock.mu.Unlock()
		if clock.resets < holdAfter {
			t.Errorf("the idle timer was reset %d times for %d events; want once an event", clock.resets, holdAfter)
		}
	})
}
