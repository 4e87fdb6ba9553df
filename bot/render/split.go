package render

import (
	"strings"
	"unicode/utf8"
)

// Segment is one page of a split answer: Body is a slice of the original
// text, starting at byte Start; Prefix and Suffix are fences the splitter
// added so that no page leaves a code block open. The bodies concatenate
// back to the text.
type Segment struct {
	Prefix, Body, Suffix string
	Start                int
}

// String is the page as posted.
func (s Segment) String() string { return s.Prefix + s.Body + s.Suffix }

// Chars counts what platforms count: characters (code points), not bytes.
func Chars(s string) int { return utf8.RuneCountInString(s) }

// Split cuts text into pages of at most limit characters, never
// leaving a code block open across a cut: a cut inside a fenced block
// closes the fence at the end of the page and reopens it (with its
// language) at the start of the next. Cuts prefer a line end, then a
// space.
func Split(text string, limit int) []Segment {
	return splitPages(text, limit, nil)
}

// splitPages is splitText where a page must also end at each of cuts
// (byte offsets into text, ascending): where a native stream was rolled
// over.
func splitPages(text string, limit int, cuts []int) []Segment {
	var pages []Segment
	prefix, start := "", 0
	for _, c := range cuts {
		if c <= start || c > len(text) {
			continue
		}
		segs := splitFrom(text[start:c], start, limit, prefix)
		last := &segs[len(segs)-1]
		prefix = ""
		if open, fence, lang := openBlock(last.Prefix + last.Body); open {
			last.Suffix = closeFence(last.Body, fence)
			prefix = fence + lang + "\n"
		}
		pages = append(pages, segs...)
		start = c
	}
	return append(pages, splitFrom(text[start:], start, limit, prefix)...)
}

// splitFrom splits text, which begins at offset in the answer and whose
// first page begins with prefix (a reopened fence).
func splitFrom(text string, offset, limit int, prefix string) []Segment {
	if limit <= 0 {
		return []Segment{{Prefix: prefix, Body: text, Start: offset}}
	}
	var pages []Segment
	for Chars(prefix)+Chars(text) > limit {
		cut := cutPoint(text, limit-Chars(prefix)-len("\n```"))
		seg := Segment{Prefix: prefix, Body: text[:cut], Start: offset}
		open, fence, lang := openBlock(prefix + seg.Body)
		prefix = ""
		if open {
			seg.Suffix = closeFence(seg.Body, fence)
			prefix = fence + lang + "\n"
		}
		pages = append(pages, seg)
		text, offset = text[cut:], offset+cut
	}
	return append(pages, Segment{Prefix: prefix, Body: text, Start: offset})
}

// closeFence is what closes a code block opened with fence and left open
// at the end of body.
func closeFence(body, fence string) string {
	if strings.HasSuffix(body, "\n") {
		return fence
	}
	return "\n" + fence
}

// cutPoint picks where to cut within the first n characters of s, as a
// byte offset: after the last newline, else after the last space, else at
// n characters.
func cutPoint(s string, n int) int {
	n = max(n, 1)
	end := ByteOffset(s, n)
	if end >= len(s) {
		return len(s)
	}
	if i := strings.LastIndexByte(s[:end], '\n'); i > end/2 {
		return i + 1
	}
	if i := strings.LastIndexByte(s[:end], ' '); i > end/2 {
		return i + 1
	}
	return end
}

// ByteOffset is where the n-th character of s begins (len(s) past its
// end).
func ByteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// OpenFence reports whether s ends inside a fenced code block, and the
// language of that block.
func OpenFence(s string) (bool, string) {
	open, _, lang := openBlock(s)
	return open, lang
}

// openBlock reports whether s ends inside a fenced code block, with the
// fence that opened it and its language. As in CommonMark (and the web
// page's renderer), a block opened with N backticks closes only on a line
// of at least N backticks and nothing else, so a line of output that is
// ``` inside a ```` block (command output is fenced longer than its
// longest run of backticks) neither closes the block nor is taken for a
// fence when the block is reopened on the next page.
func openBlock(s string) (open bool, fence, lang string) {
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		n := len(t) - len(strings.TrimLeft(t, "`"))
		switch {
		case n < 3:
		case !open:
			open, fence, lang = true, t[:n], strings.TrimSpace(t[n:])
		case n >= len(fence) && strings.TrimSpace(t[n:]) == "":
			open, fence, lang = false, "", ""
		}
	}
	return open, fence, lang
}
