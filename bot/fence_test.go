package bot

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
	fence := strings.Repeat("`", longestRun(out.String(), '`')+1)
	text := "Ran `cat notes` on web-1:\n" + fence + "\n" + out.String() + fence + "\nDone."
	pages := splitText(text, 500)
	if len(pages) < 3 {
		t.Fatalf("%d pages, want the output split across several", len(pages))
	}
	for i, p := range pages {
		page := p.String()
		if open, _ := openFence(page); open {
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
