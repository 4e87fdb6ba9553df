package streamretry

import (
	"testing"

	"github.com/opsbot/opsbot/agent"
)

// TestEmitter remembers that something was shown and that the caller
// stopped, after which nothing more reaches the caller.
func TestEmitter(t *testing.T) {
	t.Parallel()
	var got []string
	e := NewEmitter(func(ev agent.StreamEvent) bool {
		got = append(got, ev.Text)
		return len(got) < 2
	})
	if e.Shown() || e.Stopped() {
		t.Fatal("a new emitter has shown or stopped")
	}
	if !e.Emit(agent.StreamEvent{Kind: agent.EventText, Text: "a"}) || !e.Shown() || e.Stopped() {
		t.Fatal("first event: want passed on, shown, not stopped")
	}
	if e.Emit(agent.StreamEvent{Kind: agent.EventText, Text: "b"}) || !e.Stopped() {
		t.Fatal("second event: want the caller's stop noticed")
	}
	if e.Emit(agent.StreamEvent{Kind: agent.EventText, Text: "c"}) {
		t.Fatal("event after stop: want false")
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("caller saw %q; want [a b]", got)
	}
}
