package checks

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// The symbols of the report's text.
const (
	symOK   = "✓"
	symWarn = "⚠"
	symFail = "✗"
	symDown = "⊘"
)

// SummaryLine is the report in one line, e.g. "✗ 2 failing · ⚠ 1 warning ·
// ✓ 97 ok · 1 unreachable — 1 new failure, 1 recovered since 09:00
// yesterday".
func (rep Report) SummaryLine() string {
	c := rep.Counts()
	var parts []string
	if c.Fail > 0 {
		parts = append(parts, fmt.Sprintf("%s %d failing", symFail, c.Fail))
	}
	if c.Warn > 0 {
		parts = append(parts, fmt.Sprintf("%s %s", symWarn, plural(c.Warn, "warning")))
	}
	parts = append(parts, fmt.Sprintf("%s %d ok", symOK, c.OK))
	if c.Unreachable > 0 {
		parts = append(parts, fmt.Sprintf("%s %d unreachable", symDown, c.Unreachable))
	}
	return strings.Join(parts, " · ") + " — " + rep.changeLine(c)
}

// changeLine says what changed since the previous run.
func (rep Report) changeLine(c Counts) string {
	if rep.PrevAt.IsZero() {
		return "first run"
	}
	var parts []string
	if c.NewFailures > 0 {
		parts = append(parts, plural(c.NewFailures, "new failure"))
	}
	if c.NewWarnings > 0 {
		parts = append(parts, plural(c.NewWarnings, "new warning"))
	}
	if c.Recovered > 0 {
		parts = append(parts, fmt.Sprintf("%d recovered", c.Recovered))
	}
	since := "since " + rep.when(rep.PrevAt)
	if len(parts) == 0 {
		return "no change " + since
	}
	return strings.Join(parts, ", ") + " " + since
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// when shows t relative to the run, in the schedule's zone: "09:00",
// "09:00 yesterday", "Mon 09:00", "2026-11-02 09:00".
func (rep Report) when(t time.Time) string {
	loc := rep.Zone
	if loc == nil {
		loc = time.UTC
	}
	t, now := t.In(loc), rep.At.In(loc)
	day := func(x time.Time) time.Time { return time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, loc) }
	switch days := int(day(now).Sub(day(t)).Hours()+12) / 24; {
	case days == 0:
		return t.Format("15:04")
	case days == 1:
		return t.Format("15:04") + " yesterday"
	case days > 1 && days < 7:
		return t.Format("Mon 15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// line is one result in a section: host, check, value or output, why and
// since when.
func (rep Report) line(sym string, r Result) string {
	var b strings.Builder
	b.WriteString(sym + " " + r.Host)
	if r.Check != "" {
		b.WriteString(" · " + r.Check)
	}
	switch {
	case r.HasValue && r.Prev != nil && r.Prev.HasValue && r.Prev.Value != r.Value:
		fmt.Fprintf(&b, " %s → %s", formatNum(r.Prev.Value, r.Unit), r.value())
	case r.HasValue:
		fmt.Fprintf(&b, " %s", r.value())
	case r.Output != "" && r.Status != StatusUnreachable:
		fmt.Fprintf(&b, " `%s`", strings.ReplaceAll(r.Output, "`", "'"))
	}
	if r.Detail != "" {
		fmt.Fprintf(&b, " — %s", r.Detail)
	}
	switch {
	case r.Status == StatusOK && r.Prev != nil && r.Prev.Status != StatusOK:
		fmt.Fprintf(&b, " — was %s since %s", statusWords[r.Prev.Status], rep.when(cmp.Or(r.Prev.Since, rep.PrevAt)))
	case rep.isNew(r):
		b.WriteString(" · **new**")
	case r.Status != StatusOK:
		b.WriteString(" · since " + rep.when(r.Since))
	}
	return b.String()
}

var statusWords = map[Status]string{StatusWarn: "warning", StatusFail: "failing", StatusUnreachable: "unreachable", StatusOK: "ok"}

// unreachable is one result per unreachable host: all its checks share
// the cause.
func (rep Report) unreachable() []Result {
	var out []Result
	seen := map[string]bool{}
	for _, r := range rep.ordered(StatusUnreachable) {
		if !seen[r.Host] {
			seen[r.Host] = true
			r.Check = ""
			out = append(out, r)
		}
	}
	return out
}

// section is a heading and its lines.
type section struct {
	title string
	lines []string
	code  bool // the lines are a fixed-width block
	brief bool // the summary shows its lines too
}

// sections are the report's parts in reading order: failures, warnings,
// unreachable, recovered, then the grid.
func (rep Report) sections(legend bool) []section {
	return append(rep.problems(), rep.grid(legend))
}

// problems are the sections of results that are not (still) ok.
func (rep Report) problems() []section {
	var out []section
	add := func(title, sym string, rs []Result) {
		if len(rs) == 0 {
			return
		}
		s := section{title: fmt.Sprintf("**%s (%d)**", title, len(rs)), brief: sym != symOK}
		for _, r := range rs {
			s.lines = append(s.lines, rep.line(sym, r))
		}
		out = append(out, s)
	}
	add("Failing", symFail, rep.ordered(StatusFail))
	add("Warnings", symWarn, rep.ordered(StatusWarn))
	add("Unreachable", symDown, rep.unreachable())
	add("Recovered", symOK, rep.recovered())
	return out
}

// recovered are the results that turned ok in this run.
func (rep Report) recovered() []Result {
	var out []Result
	for _, r := range rep.Results {
		if r.Status == StatusOK && r.Prev != nil && r.Prev.Status != StatusOK {
			out = append(out, r)
		}
	}
	rep.sort(out)
	return out
}

// Summary is the message kept for the day: the summary line and the
// problems that fit in maxText runes; the rest is in Details.
func (rep Report) Summary(maxText int) connectors.Message {
	head := fmt.Sprintf("**Health · %s** — %s", rep.Schedule, rep.SummaryLine())
	var lines []string
	for _, s := range rep.problems() {
		if s.brief {
			lines = append(lines, s.lines...)
		}
	}
	return connectors.Message{Text: fitLines(head, lines, maxText), Context: rep.context()}
}

// context is the report's small print: when it ran and how long it took.
func (rep Report) context() string {
	loc := rep.Zone
	if loc == nil {
		loc = time.UTC
	}
	return fmt.Sprintf("%s · %s · took %s", rep.Schedule, rep.At.In(loc).Format("2006-01-02 15:04 MST"), rep.Took.Round(100*time.Millisecond))
}

// fitLines is head and as many lines as fit in max runes, with a note of
// how many more are in the thread.
func fitLines(head string, lines []string, max int) string {
	text := head
	for i, l := range lines {
		more := fmt.Sprintf("\n… and %d more in the thread", len(lines)-i)
		if runes(text)+1+runes(l)+runes(more) > max && i < len(lines)-1 || runes(text)+1+runes(l) > max {
			if runes(text)+runes(more) <= max {
				text += more
			}
			return text
		}
		text += "\n" + l
	}
	return text
}

// Details are the run's full report for the thread: failures, warnings,
// unreachable hosts, recoveries and the grid, split into messages of at
// most maxText runes, never inside a line; a code block is closed at the
// end of a message and reopened in the next.
func (rep Report) Details(maxText int) []connectors.Message {
	return rep.details(maxText, true)
}

// details are the Details, with the grid's legend or without it (when
// the day's thread already shows it).
func (rep Report) details(maxText int, legend bool) []connectors.Message {
	p := &packer{max: maxText}
	for _, s := range rep.sections(legend) {
		p.section(s)
	}
	p.flush()
	out := make([]connectors.Message, len(p.texts))
	for i, t := range p.texts {
		out[i] = connectors.Message{Text: t}
	}
	return out
}
