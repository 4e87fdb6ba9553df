package console

import (
	"regexp"
	"strings"
)

// The bot writes CommonMark (connectors.Message.Text); a terminal shows
// text as it is. markdown converts what the bot writes, line by line as
// Slack's connector converts it to mrkdwn: **bold** and headings become
// plain (ANSI bold on a terminal that shows it), a fenced block becomes an
// indented block without its fences, `code` becomes its text, _emphasis_
// plain, [label](url) "label (url)", and \* escapes their character.

var (
	mdLink   = regexp.MustCompile(`\[([^\]\n]+)\]\(([^)\s]+)\)`)
	mdBold   = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	mdStar   = regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*\n]*?)\*([^*\w]|$)`)
	mdUnder  = regexp.MustCompile(`(^|[^_\w])_([^_\s][^_\n]*?)_([^_\w]|$)`)
	mdHead   = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	mdEscape = regexp.MustCompile("\\\\([\\\\`*_{}\\[\\]()#+\\-.!|<>])")
)

// hideEscapes keeps escaped marks (\*) from the patterns; showEscapes
// puts them back as the character itself.
var (
	hideEscapes = strings.NewReplacer(`\*`, "\uE001", `\_`, "\uE002", `\[`, "\uE003", `\\`, "\uE004")
	showEscapes = strings.NewReplacer("\uE001", "*", "\uE002", "_", "\uE003", "[", "\uE004", `\`)
)

// codeIndent sets a fenced block's lines off from the text around it.
const codeIndent = "    "

// bold shows s in bold on a terminal that shows ANSI styles.
func bold(s string, styled bool) string {
	if !styled || s == "" {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

// renderMarkdown converts a whole text for the terminal.
func renderMarkdown(text string, styled bool) string {
	s := mdStream{styled: styled}
	return s.write(text, true)
}

// renderLine converts one line outside code fences.
func renderLine(l string, styled bool) string {
	if m := mdHead.FindStringSubmatch(l); m != nil {
		return bold(renderInline(m[1], false), styled)
	}
	return renderInline(l, styled)
}

// renderInline converts a line's spans; the text of `code` is kept as it
// is, and a backtick without its pair stays.
func renderInline(l string, styled bool) string {
	parts := strings.Split(l, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1:
			b.WriteString(p) // inside `code`
			continue
		case i%2 == 1:
			b.WriteString("`") // an unpaired backtick
		}
		p = hideEscapes.Replace(p)
		p = mdLink.ReplaceAllString(p, "$1 ($2)")
		p = mdBold.ReplaceAllStringFunc(p, func(s string) string { return bold(s[2:len(s)-2], styled) })
		p = replaceAll(mdStar, p)
		p = replaceAll(mdUnder, p)
		b.WriteString(mdEscape.ReplaceAllString(showEscapes.Replace(p), "$1"))
	}
	return b.String()
}

// replaceAll drops emphasis markers; run twice, as one match's closing
// boundary character can be the next one's opening.
func replaceAll(re *regexp.Regexp, s string) string {
	for range 2 {
		s = re.ReplaceAllString(s, "${1}${2}${3}")
	}
	return s
}

// fence reports whether l opens or closes a fenced code block.
func fence(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "```") }

// mdStream converts a message that arrives in pieces (a streamed answer):
// a complete line is converted whole; of a line still growing only the
// part before its first mark is printed, so what is printed never has to
// change when the rest arrives.
type mdStream struct {
	styled  bool
	inFence bool
	line    string // the current line's text so far
	shown   string // what was printed of it
}

// write takes the next piece of text and returns what to print; flush
// prints the current line as it stands (the message is complete for now).
func (s *mdStream) write(text string, flush bool) string {
	var out strings.Builder
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		out.WriteString(s.endLine(s.line + text[:i]))
		text = text[i+1:]
	}
	s.line += text
	now := s.safe()
	if flush {
		now, _ = s.render(s.line)
	}
	if strings.HasPrefix(now, s.shown) {
		out.WriteString(now[len(s.shown):])
		s.shown = now
	}
	return out.String()
}

// endLine returns what is left to print of a complete line, and starts
// the next.
func (s *mdStream) endLine(l string) string {
	r, keep := s.render(l)
	if fence(l) {
		s.inFence = !s.inFence
	}
	shown := s.shown
	s.line, s.shown = "", ""
	if !keep {
		return ""
	}
	if !strings.HasPrefix(r, shown) {
		// Flushed before it was complete: the rest as it came.
		r = renderLine(strings.TrimPrefix(l, shown), s.styled)
		shown = ""
	}
	return r[len(shown):] + "\n"
}

// render converts a complete line; keep is false for a fence's own line.
func (s *mdStream) render(l string) (string, bool) {
	switch {
	case fence(l):
		return "", false
	case s.inFence:
		return codeIndent + l, true
	}
	return renderLine(l, s.styled), true
}

// safe is what may be printed of the current, incomplete line: in a
// block, all of it unless it may be the closing fence; else the text
// before its first mark.
func (s *mdStream) safe() string {
	l := s.line
	if s.inFence {
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "`") {
			return ""
		}
		return codeIndent + l
	}
	if strings.HasPrefix(strings.TrimSpace(l), "#") {
		return ""
	}
	if i := strings.IndexAny(l, "*_`[\\"); i >= 0 {
		l = l[:i]
	}
	return l
}
