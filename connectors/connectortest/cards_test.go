package connectortest_test

import (
	"context"
	"slices"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
)

// memTasks is memConn with task cards; stacked is the bug of a platform
// that adds a card for each update instead of replacing the card of its
// id.
type memTasks struct {
	*memConn
	stacked bool
	cards   map[string][]connectors.Task
}

func (c *memTasks) UpdateTask(_ context.Context, ref connectors.Ref, t connectors.Task) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cards := c.cards[ref.ID]
	if i := slices.IndexFunc(cards, func(o connectors.Task) bool { return o.ID == t.ID }); i >= 0 && !c.stacked {
		cards[i] = t
	} else {
		c.cards[ref.ID] = append(cards, t)
	}
	return nil
}

// only is the case name of cases; it fails t when there is none.
func only(t *testing.T, cases []connectortest.Case, name string) connectortest.Case {
	t.Helper()
	for _, c := range cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q", name)
	return connectortest.Case{}
}

// The task-card case runs for a TaskUpdater whose harness shows its
// cards, passes cards replaced by id, and fails cards stacked per update;
// a connector that is no TaskUpdater gets no such case.
func TestSuiteTaskCards(t *testing.T) {
	t.Parallel()
	if slices.ContainsFunc(connectortest.Cases(newMem(false).harness()), func(c connectortest.Case) bool { return c.Name == "task cards" }) {
		t.Errorf("a connector without task cards got the task-card case")
	}
	for _, stacked := range []bool{false, true} {
		c := &memTasks{memConn: newMem(false), stacked: stacked, cards: map[string][]connectors.Task{}}
		h := c.harness()
		h.Conn = c
		h.Tasks = func(ref connectors.Ref) []connectors.Task {
			c.mu.Lock()
			defer c.mu.Unlock()
			return append([]connectors.Task(nil), c.cards[ref.ID]...)
		}
		r := &recorder{ctx: t.Context()}
		only(t, connectortest.Cases(h), "task cards").Test(r)
		if failed := len(r.errors) > 0; failed != stacked {
			t.Errorf("cards stacked %v: the case failed %v (%q)", stacked, failed, r.errors)
		}
	}
}

// The feedback case passes a click that comes back with the verdict and
// the turn, and fails one that loses the turn.
func TestSuiteFeedback(t *testing.T) {
	t.Parallel()
	for _, keepsTurn := range []bool{true, false} {
		c := newMem(false)
		h := c.harness()
		h.ClickFeedback = func(ref connectors.Ref, value string, u connectors.User) {
			if !keepsTurn {
				value = "bad:"
			}
			c.events <- connectors.Event{Kind: connectors.EventAction, Platform: "mem", Channel: ref.Channel, Thread: ref.Thread,
				User: u, ActionID: connectors.ActionFeedback, Value: value, Ref: ref}
		}
		r := &recorder{ctx: t.Context()}
		only(t, connectortest.Cases(h), "feedback round trip").Test(r)
		if passed := len(r.errors) == 0; passed != keepsTurn {
			t.Errorf("a click that keeps the turn %v: the case passed %v (%q)", keepsTurn, passed, r.errors)
		}
	}
}
