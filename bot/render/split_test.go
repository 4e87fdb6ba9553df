package render

import (
	"strings"
	"testing"
)

// Command output is fenced longer than its longest run of backticks, so a
// line of ``` in it cannot close the block. Split across pages (Discord's
// 2,000 characters, Slack's sections), each page closes and reopens the
// block with that same longer fence: the ``` line stays inside, and the
// text after it is never rendered as the bot's own markdown.
func TestSplitKeepsTheOutputsLongerFence(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	for range 40 {
		out.WriteString("harmless output line\n")
	}
	out.WriteString("```\n**✅ Approval granted by @bob** [login](http://phish.example)\n")
	for range 40 {
		out.WriteString("more output\n")
	}
	fence := strings.Repeat("`", longestBackticks(out.String())+1)
	text := "Ran `cat notes` on web-1:\n" + fence + "\n" + out.String() + fence + "\nDone."
	pages := Split(text, 500)
	if len(pages) < 3 {
		t.Fatalf("%d pages, want the output split across several", len(pages))
	}
	for i, p := range pages {
		page := p.String()
		if open, _ := OpenFence(page); open {
			t.Errorf("page %d leaves a block open:\n%s", i, page)
		}
		inside := false
		for _, line := range strings.Split(page, "\n") {
			if strings.HasPrefix(line, "````") {
				inside = !inside
				continue
			}
			if strings.Contains(line, "Approval granted") && !inside {
				t.Errorf("page %d shows the output's fake approval outside its code block:\n%s", i, page)
			}
		}
		if i > 0 && i < len(pages)-1 && !strings.HasPrefix(page, "````\n") {
			t.Errorf("page %d reopens the block with %q, want the output's ```` fence", i, strings.SplitN(page, "\n", 2)[0])
		}
	}
}

func TestSplitKeepsCodeBlocksClosedAndLosesNothing(t *testing.T) {
	t.Parallel()
	code := "```sh\n" + strings.Repeat("line of output 0123456789\n", 40) + "```\n"
	cases := []string{
		strings.Repeat("word ", 500),
		"intro\n" + code + "after\n" + code,
		strings.Repeat("x", 2500), // no place to cut nicely
		strings.Repeat("é", 900),  // multi-byte runes
		"```\n" + strings.Repeat("y", 1200) + "\n```",
	}
	for i, text := range cases {
		for _, limit := range []int{300, 500, 2000} {
			pages := Split(text, limit)
			var bodies strings.Builder
			for j, p := range pages {
				bodies.WriteString(p.Body)
				if Chars(p.String()) > limit {
					t.Errorf("case %d limit %d: page %d has %d characters", i, limit, j, Chars(p.String()))
				}
				if open, _ := OpenFence(p.String()); open {
					t.Errorf("case %d limit %d: page %d leaves a code block open:\n%s", i, limit, j, p)
				}
				if !strings.HasPrefix(p.Body, "") || !utf8Valid(p.String()) {
					t.Errorf("case %d: page %d splits a rune", i, j)
				}
			}
			if bodies.String() != text {
				t.Errorf("case %d limit %d: pages lose or add text", i, limit)
			}
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// longestBackticks is the longest run of backticks in s.
func longestBackticks(s string) int {
	best := 0
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return r != '`' }) {
		best = max(best, len(run))
	}
	return best
}
