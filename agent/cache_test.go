package agent_test

import (
	"fmt"
	"strings"
	"testing"
)

// A 20-step investigation with the clock moving a minute a call keeps a
// prefix that stays the same byte for byte: the system prompt holds no
// time, the time is a note in the latest user message, old output is cut
// in bulk, not one result a step; Anthropic's request marks the tools, the
// system prompt and the two last user messages (never more than the 4
// breakpoints the API takes), and its cache serves at least 70% of the
// input. The figures are logged (go test -v -run InvestigationCache).
func TestInvestigationCacheKeepsAStablePrefix(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		bodies := investigation(t, w)
		if len(bodies) != 20 {
			t.Fatalf("%d requests; want 20", len(bodies))
		}
		fs := cacheModel(bodies)
		total := logFigures(t, fs)
		system := ""
		breaks := 0
		for i, body := range bodies {
			us := units(body)
			sys := systemOf(us)
			if strings.Contains(sys, "09:") || (i > 0 && sys != system) {
				t.Errorf("request %d: the system prompt changed or holds the time: %.120q", i+1, sys)
			}
			system = sys
			if last := us[len(us)-1].key; !strings.Contains(last, fmt.Sprintf("09:%02d", i+1)) {
				t.Errorf("request %d: the latest user message does not end with the time: %.200q", i+1, last)
			}
			if i > 0 && fs[i].prefix < fs[i-1].sent-fs[i-1].sent/10 {
				breaks++ // a bulk cut rewrote old output
			}
			if w.name == "anthropic" {
				checkMarks(t, i+1, us)
			}
		}
		if breaks > 3 {
			t.Errorf("the shared prefix broke at %d of 19 steps; want old output cut in bulk (at most 3 times)", breaks)
		}
		if w.name == "anthropic" && total.marked*10 < total.sent*7 {
			t.Errorf("the cache marks serve %.0f%% of the input; want at least 70%%", pct(total.marked, total.sent))
		}
		if total.prefix*10 < total.sent*7 {
			t.Errorf("%.0f%% of the input is shared with the request before; want at least 70%%", pct(total.prefix, total.sent))
		}
	})
}

// systemOf is the system prompt's text among a request's units.
func systemOf(us []unit) string {
	var s strings.Builder
	for _, u := range us {
		if strings.HasPrefix(u.key, "system:") || strings.Contains(u.key, `"role":"system"`) {
			s.WriteString(u.key)
		}
	}
	return s.String()
}

// checkMarks checks where an Anthropic request puts its cache marks: the
// last tool, the system prompt, the block before the time note, and the
// last block of the user message before (from the second request on).
func checkMarks(t *testing.T, n int, us []unit) {
	t.Helper()
	var marked []int
	lastTool, lastSystem := -1, -1
	for i, u := range us {
		if u.marked {
			marked = append(marked, i)
		}
		if strings.HasPrefix(u.key, "tool:") {
			lastTool = i
		}
		if strings.HasPrefix(u.key, "system:") {
			lastSystem = i
		}
	}
	want := []int{lastTool, lastSystem}
	if n > 1 {
		prevUser := len(us) - 5 // …, user: result, assistant: text, assistant: call, user: result, user: time
		want = append(want, prevUser)
	}
	want = append(want, len(us)-2)
	if len(marked) > 4 || fmt.Sprint(marked) != fmt.Sprint(want) {
		t.Errorf("request %d: marks on units %v; want %v (tools, system, the user message before, the last block before the time), at most 4", n, marked, want)
	}
}
