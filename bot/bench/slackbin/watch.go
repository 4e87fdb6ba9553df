package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// thread is what a person watching one answer's thread saw, and when.
type thread struct {
	n      int
	ts     string // the mention's, the thread's root
	asked  time.Time
	shown  string    // the bot's messages as last seen, context lines too
	text   string    // their text alone
	first  time.Time // the answer's first words visible
	last   time.Time // the last visible change
	gap    time.Duration
	done   bool
	ending string
}

// look notes what the thread shows now; it reports whether the answer is
// complete (its last words shown and no message still streaming).
func (th *thread) look(s *slackfake.Server, now time.Time) bool {
	if th.done {
		return true
	}
	var text, words strings.Builder
	streaming := false
	for _, m := range s.Thread(channel, th.ts) {
		// The list of what ran, which the bot posts after an answer that
		// ran commands, is not the answer's text.
		if m.Bot && !strings.HasPrefix(m.Shown(), "*What ran*") {
			words.WriteString(m.Shown())
			text.WriteString(m.Shown())
			text.WriteString(m.Context())
			streaming = streaming || m.Streaming
		}
	}
	if shown := text.String(); shown != th.shown {
		if th.first.IsZero() && strings.TrimSpace(shown) != "" {
			th.first = now
		}
		if !th.first.IsZero() && !th.last.IsZero() {
			th.gap = max(th.gap, now.Sub(th.last))
		}
		if !th.first.IsZero() {
			th.last = now
		}
		th.shown, th.text = shown, words.String()
	}
	th.done = !streaming && strings.Contains(th.shown, th.ending)
	return th.done
}

// watch follows every thread until each answer is complete or timeout
// passed; it reports whether all completed.
func watch(fake *slackfake.Server, threads []*thread, timeout time.Duration) bool {
	return fake.WaitFor(timeout, func(s *slackfake.Server) bool {
		now := time.Now()
		all := true
		for _, th := range threads {
			all = th.look(s, now) && all
		}
		return all
	})
}

// report prints the figures of the run, the harness's columns.
func report(fake *slackfake.Server, m *model, threads []*thread, elapsed time.Duration) {
	var gaps, firsts, signs, lags []time.Duration
	whole := 0
	seen := signed(fake)
	for _, th := range threads {
		gaps = append(gaps, th.gap)
		firsts = append(firsts, th.first.Sub(th.asked))
		sign := th.first
		if at, ok := seen[th.ts]; ok && at.Before(sign) {
			sign = at
		}
		signs = append(signs, sign.Sub(th.asked))
		if end := m.endOf(th.n); !end.IsZero() {
			lags = append(lags, max(th.last.Sub(end), 0))
		}
		if got, want := strings.TrimSpace(th.text), answerText(th.n, m.chars); got == want {
			whole++
		} else {
			at := 0
			for at < min(len(got), len(want)) && got[at] == want[at] {
				at++
			}
			fmt.Printf("  thread %d shows %d of %d characters, differing from character %d: %q, want %q\n",
				th.n, len(got), len(want), at, got[at:min(at+60, len(got))], want[at:min(at+60, len(want))])
		}
	}
	slices.Sort(gaps)
	slices.Sort(firsts)
	slices.Sort(signs)
	slices.Sort(lags)
	n := len(threads)
	fmt.Printf("real opsbot binary, %d answers of %d characters over %s each, all asked at once; run took %s\n", n, m.chars, m.duration, elapsed.Round(time.Second))
	fmt.Printf("  429s: %d\n", fake.Served429())
	fmt.Printf("  longest gap between visible updates per thread: p50 %s, max %s (target ≤ %s)\n", round(gaps[n/2]), round(gaps[n-1]), target(n))
	fmt.Printf("  first visible sign (a reaction, or the first words) after the mention: p50 %s, max %s\n", round(signs[n/2]), round(signs[n-1]))
	fmt.Printf("  first visible words after the mention: p50 %s, max %s\n", round(firsts[n/2]), round(firsts[n-1]))
	if len(lags) > 0 {
		fmt.Printf("  final lag (last visible change after the model ended): p50 %s, max %s\n", round(lags[len(lags)/2]), round(lags[len(lags)-1]))
	}
	fmt.Printf("  threads showing exactly the model's text: %d/%d\n", whole, n)
	if m.command != "" {
		carded := 0
		for _, th := range threads {
			var cards []slackfake.Task
			for _, msg := range fake.Thread(channel, th.ts)[1:] {
				cards = append(cards, msg.Tasks...)
			}
			if len(cards) == 1 && cards[0].Status == "complete" {
				carded++
			}
		}
		fmt.Printf("  threads showing their command %q as one card, complete: %d/%d\n", m.command, carded, n)
	}
	fmt.Printf("  reactions: added %d, removed %d by the report\n", fake.Calls("reactions.add"), fake.Calls("reactions.remove"))
	fmt.Printf("  calls: startStream %d, stopStream %d, appendStream %d, update %d, postMessage %d\n",
		fake.Calls("chat.startStream"), fake.Calls("chat.stopStream"), fake.Calls("chat.appendStream"), fake.Calls("chat.update"), fake.Calls("chat.postMessage"))
}

// signed is when each question (by its ts) first showed a reaction.
func signed(fake *slackfake.Server) map[string]time.Time {
	at := map[string]time.Time{}
	for _, r := range fake.Reactions() {
		if _, ok := at[r.TS]; r.Added && !ok {
			at[r.TS] = r.At
		}
	}
	return at
}

// target is issue 32's longest gap at n answers.
func target(n int) time.Duration {
	if n <= 5 {
		return 3 * time.Second
	}
	return 10 * time.Second
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
