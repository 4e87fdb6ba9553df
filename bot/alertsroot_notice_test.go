package bot

import (
	"strings"
	"testing"
	"time"
)

// The root's second line says what the last notice brought: the first
// says when the group began firing, a repeat (the same set again later)
// says "still firing", an added or resolved alert says so, and the end
// says resolved. A new user's very first notice read "Still firing since".
func TestAlertRootSaysWhatEachNoticeBrought(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	steps := []struct{ file, want string }{
		{"am_firing.json", "🔴 **FIRING** · NodeDown: Node web-1 is down\nFiring since 00:10 UTC · source"},
		{"am_firing.json", "\nStill firing since 00:10 UTC (repeat notice 00:20 UTC) · source"},
		{"am_added.json", "\nFiring since 00:10 UTC · 1 alert added 00:25 UTC · source"},
		{"am_partly_resolved.json", "\nFiring since 00:10 UTC · 1 alert resolved 00:30 UTC · source"},
		{"am_resolved.json", "✅ **RESOLVED** · NodeDown\nFired 00:10 UTC, resolved 00:40 UTC (lasted 30 min) · source"},
	}
	for _, s := range steps {
		r.deliver("am", s.file)
		got := r.roots()[0].msg.Text
		if !strings.Contains(got, s.want) {
			t.Errorf("after %s the root lacks %q:\n%s", s.file, s.want, got)
		}
		if s.want[0] != '\n' && strings.Contains(got, "Still firing") {
			t.Errorf("after %s the root says it still fires:\n%s", s.file, got)
		}
		r.clock = r.clock.Add(5 * time.Minute)
	}
}

// A PagerDuty acknowledgement changes the alert without adding or
// resolving one: the root says it was updated, not that it is a repeat.
// Its incident, with no label of its own, is listed by its id.
func TestAlertRootAcknowledgementIsAnUpdate(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	r.deliver("pd", "pd_triggered.json")
	if got := r.roots()[0].msg.Text; strings.Contains(got, "Still firing") || !strings.Contains(got, "\nFiring since ") {
		t.Errorf("first notice:\n%s", got)
	}
	if got := r.roots()[0].msg.Text; strings.Contains(got, "``") {
		t.Errorf("an alert with no label of its own is listed nameless:\n%s", got)
	}
	r.clock = r.clock.Add(5 * time.Minute)
	r.deliver("pd", "pd_acknowledged.json")
	if got := r.roots()[0].msg.Text; strings.Contains(got, "Still firing") || !strings.Contains(got, " · updated ") {
		t.Errorf("after the acknowledgement:\n%s", got)
	}
}
