package slack

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// longAnswer is n sentences on one line, as a model writes a paragraph.
func longAnswer(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "Sentence %d of the long answer. ", i)
	}
	return b.String()
}

// A long answer is cut into sections at word boundaries, each within the
// limit, and nothing is lost: the pieces put together are the answer.
func TestSectionsCutAtWords(t *testing.T) {
	t.Parallel()
	text := "Summary line.\n\n" + longAnswer(300) + "\n" + longAnswer(250) + "\nThe end."
	parts := sections(text, maxSection)
	if len(parts) < 6 {
		t.Fatalf("%d sections for %d characters; want at least 6", len(parts), len(text))
	}
	for i, p := range parts {
		if n := utf8.RuneCountInString(p); n > maxSection {
			t.Errorf("section %d has %d characters; the limit is %d", i, n, maxSection)
		}
		if i < len(parts)-1 && !strings.HasSuffix(p, " ") && !strings.HasSuffix(p, "\n") {
			t.Errorf("section %d is cut inside a word: …%q | %q…", i, p[len(p)-20:], parts[i+1][:20])
		}
	}
	if got := strings.Join(parts, ""); got != text {
		t.Errorf("the sections put together differ from the answer (%d vs %d characters)", len(got), len(text))
	}
	// The fallback text is cut at a word too.
	fb := truncate(text, maxText)
	head := strings.TrimSuffix(fb, "…")
	if utf8.RuneCountInString(fb) > maxText || !strings.HasPrefix(text, head) ||
		!strings.ContainsRune(" \n", rune(text[len(head)])) && !strings.HasSuffix(head, " ") {
		t.Errorf("the fallback is cut inside a word: …%q", fb[len(fb)-30:])
	}
}

// Only a word longer than a section is cut inside, and it starts a section
// of its own.
func TestSectionsHardCutOnlyLongWords(t *testing.T) {
	t.Parallel()
	word := strings.Repeat("x", 7000)
	text := "see " + word + " done"
	parts := sections(text, maxSection)
	want := []string{"see ", word[:3000], word[3000:6000], word[6000:] + " done"}
	if strings.Join(parts, "|") != strings.Join(want, "|") {
		var lens []int
		for _, p := range parts {
			lens = append(lens, len(p))
		}
		t.Errorf("sections of lengths %v; want 4, 3000, 3000, 1005", lens)
	}
}

// A code fence is never cut badly: every section has its fences paired,
// and every code line is whole in one section.
func TestSectionsKeepFences(t *testing.T) {
	t.Parallel()
	var code strings.Builder
	for i := range 120 {
		fmt.Fprintf(&code, "line %03d: %s\n", i, strings.Repeat("ab cd ", 10))
	}
	text := longAnswer(60) + "\n```\n" + code.String() + "```\n" + longAnswer(60)
	parts := sections(text, maxSection)
	for i, p := range parts {
		if n := utf8.RuneCountInString(p); n > maxSection {
			t.Errorf("section %d has %d characters", i, n)
		}
		fences := 0
		for _, l := range strings.Split(p, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fences++
			}
		}
		if fences%2 != 0 {
			t.Errorf("section %d has %d fences; a code block is left open", i, fences)
		}
	}
	joined := strings.Join(parts, "\n")
	for _, l := range strings.Split(code.String(), "\n") {
		if !strings.Contains(joined, l) {
			t.Fatalf("code line %q is cut across sections", l)
		}
	}
}
