package bot

import "strings"

// segment is one page of a split answer: Body is a slice of the original
// text; Prefix and Suffix are fences the splitter added so that no page
// leaves a code block open. The bodies concatenate back to the text.
type segment struct {
	Prefix, Body, Suffix string
}

// String is the page as posted.
func (s segment) String() string { return s.Prefix + s.Body + s.Suffix }

// splitText cuts text into pages of at most limit bytes, never leaving a
// code block open across a cut: a cut inside a fenced block closes the
// fence at the end of the page and reopens it (with its language) at the
// start of the next. Cuts prefer a line end, then a space.
func splitText(text string, limit int) []segment {
	if limit <= 0 || len(text) <= limit {
		return []segment{{Body: text}}
	}
	var pages []segment
	prefix := ""
	for len(prefix)+len(text) > limit {
		cut := cutPoint(text, limit-len(prefix)-len("\n```"))
		seg := segment{Prefix: prefix, Body: text[:cut]}
		open, lang := openFence(prefix + seg.Body)
		prefix = ""
		if open {
			seg.Suffix = "```"
			if !strings.HasSuffix(seg.Body, "\n") {
				seg.Suffix = "\n```"
			}
			prefix = "```" + lang + "\n"
		}
		pages = append(pages, seg)
		text = text[cut:]
	}
	return append(pages, segment{Prefix: prefix, Body: text})
}

// cutPoint picks where to cut within the first n bytes: after the last
// newline, else after the last space, else at n (on a rune boundary).
func cutPoint(s string, n int) int {
	n = max(n, 1)
	if n >= len(s) {
		return len(s)
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > n/2 {
		return i + 1
	}
	if i := strings.LastIndexByte(s[:n], ' '); i > n/2 {
		return i + 1
	}
	for n > 1 && !isRuneStart(s[n]) {
		n--
	}
	return n
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// openFence reports whether s ends inside a fenced code block, and the
// language of that block.
func openFence(s string) (bool, string) {
	open, lang := false, ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			if open {
				open = false
			} else {
				open, lang = true, strings.TrimSpace(strings.TrimPrefix(t, "```"))
			}
		}
	}
	return open, lang
}
