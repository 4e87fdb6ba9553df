package textcut

import (
	"fmt"
	"regexp"
	"strings"
)

// salient matches the lines that say something went wrong: a log cut to
// its head and tail must not lose the one ERROR line in its middle.
var salient = regexp.MustCompile(`(?i)\b(errors?|fatal|panic(ked)?|traceback|exception|critical|oom|out of memory|` +
	`oom-killer|killed process|fail(ed|ure|s)?|exit (code|status)|segfault|segmentation fault|refused|timed out)\b`)

// maxLine caps one kept middle line: a matching line of a megabyte is
// still one line's worth of news.
const maxLine = 512

// Gap recognizes a line that stands for output already cut before the
// text got here (a capture's "N bytes omitted" marker) and says how many
// bytes it stands for, so that a marker tells what was really dropped.
type Gap func(line string) (bytes int64, ok bool)

// Keep is s cut to about n bytes: its head and its tail, and from the
// middle the lines that say something went wrong (ERROR, FATAL, panic,
// Traceback, OOM, failed, exit codes), at most a quarter of n. Each run of
// dropped bytes is marked with its size, counting what the lines gap
// recognizes stood for. s comes back whole when it fits.
func Keep(s string, n int, gap Gap) string {
	if len(s) <= n {
		return s
	}
	head, tail := Head(s, n/2), Tail(s, n/2)
	picks := pick(s[len(head):len(s)-len(tail)], len(head), n/4)
	used := 0
	for _, p := range picks {
		used += len(p.text)
	}
	head, tail = lineHead(s, (n-used)/2), lineTail(s, (n-used)/2)
	return stitch(s, head, tail, picks, gap)
}

// span is a kept middle line: its text and where it starts in s.
type span struct {
	at   int
	text string
}

// pick is the lines of middle (which starts at offset in s) that match
// salient, in order, until budget bytes.
func pick(middle string, offset, budget int) []span {
	var out []span
	at := offset
	for line := range strings.SplitAfterSeq(middle, "\n") {
		if salient.MatchString(line) {
			text := Head(line, maxLine)
			if budget -= len(text); budget < 0 {
				break
			}
			out = append(out, span{at: at, text: text})
		}
		at += len(line)
	}
	return out
}

// stitch writes head, the picks that lie between head and tail, and
// tail, marking each gap between them with the size it stands for.
func stitch(s, head, tail string, picks []span, gap Gap) string {
	var b strings.Builder
	b.WriteString(head)
	pos, end := len(head), len(s)-len(tail)
	for _, p := range picks {
		if p.at < pos || p.at+len(p.text) > end {
			continue // inside the head or the tail now
		}
		mark(&b, s[pos:p.at], gap)
		b.WriteString(p.text)
		if !strings.HasSuffix(p.text, "\n") {
			b.WriteString("…\n")
		}
		pos = p.at + len(p.text) // the rest of a long line counts as cut
	}
	mark(&b, s[pos:max(end, pos)], gap)
	b.WriteString(tail)
	return b.String()
}

// mark writes the marker of dropped, when there is any.
func mark(b *strings.Builder, dropped string, gap Gap) {
	if dropped == "" {
		return
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "[… %s cut here …]\n", Size(dropped, gap))
}

// Size is how many bytes dropped stands for, in words ("1.22 MB"): its
// own, but for the lines gap recognizes, which count what they stood for.
func Size(dropped string, gap Gap) string {
	var n int64
	for l := range strings.SplitAfterSeq(dropped, "\n") {
		if k, ok := gapOf(l, gap); ok {
			n += k
			continue
		}
		n += int64(len(l))
	}
	return Bytes(n)
}

func gapOf(line string, gap Gap) (int64, bool) {
	if gap == nil {
		return 0, false
	}
	return gap(strings.TrimSuffix(line, "\n"))
}

// Bytes is a byte count in words: "930 bytes", "48.1 KB", "1.22 MB".
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1000_000_000:
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}

// lineHead is about the first n bytes of s, ending at a line's end when
// one ends in its second half: a cut line reads as a different line.
func lineHead(s string, n int) string {
	h := Head(s, n)
	if i := strings.LastIndexByte(h, '\n'); i >= len(h)/2 {
		return h[:i+1]
	}
	return h
}

// lineTail is about the last n bytes of s, starting at a line's start
// when one starts in its first half.
func lineTail(s string, n int) string {
	t := Tail(s, n)
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 && i+1 < len(t) {
		return t[i+1:]
	}
	return t
}
