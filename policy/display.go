package policy

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DisplayOptions shape a command for an approval card.
type DisplayOptions struct {
	// Width wraps lines longer than this many characters; 0 keeps lines
	// whole.
	Width int
	// Limit is the most characters the card can show; a longer command is
	// shown as a preview and must be attached whole. 0 means no limit.
	Limit int
}

// Display is a command made safe to show to the people approving it.
type Display struct {
	// Text is the whole command. Control, invisible and bidirectional
	// characters are replaced by a visible ⟨NAME⟩ or ⟨U+XXXX⟩ (and a
	// literal ⟨, ⟩ or ↪ by its code, so the marks are unambiguous); long
	// lines are wrapped, continuation lines starting with "↪ ".
	Text string
	// Hidden lists the characters that were made visible, e.g.
	// "U+200B ZERO WIDTH SPACE at character 3"; empty when there were
	// none.
	Hidden []string
	// Long is set when Text is longer than the Limit: show Preview on the
	// card and attach Text, never a silently shortened command.
	Long bool
	// Preview is Text when it fits, else its beginning followed by a line
	// saying how much more is in the attachment.
	Preview string
}

// Marks used by Display; a literal occurrence in a command is escaped.
const (
	markOpen  = '⟨'
	markClose = '⟩'
	markWrap  = '↪'
)

// RenderCommand makes a command safe to show on an approval card.
func RenderCommand(cmd string, opt DisplayOptions) Display {
	toks, hidden := visibleTokens(cmd)
	d := Display{Text: wrapTokens(toks, opt.Width), Hidden: hidden}
	d.Preview = d.Text
	if opt.Limit > 0 && utf8.RuneCountInString(d.Text) > opt.Limit {
		d.Long = true
		d.Preview = preview(d.Text, opt.Limit)
	}
	return d
}

// visibleTokens splits s into display tokens, one per character, hidden
// characters replaced by their visible mark.
func visibleTokens(s string) (toks []string, hidden []string) {
	pos := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		pos++
		switch {
		case r == utf8.RuneError && size == 1:
			toks = append(toks, fmt.Sprintf("⟨0x%02X⟩", s[i]))
			hidden = append(hidden, fmt.Sprintf("invalid byte 0x%02X at character %d", s[i], pos))
		case r == '\n' || r == '\t':
			toks = append(toks, string(r))
		case r == markOpen || r == markClose || r == markWrap:
			toks = append(toks, fmt.Sprintf("⟨U+%04X⟩", r))
		default:
			if name, ok := hiddenRune(r); ok {
				toks = append(toks, "⟨"+name+"⟩")
				hidden = append(hidden, fmt.Sprintf("%s%s at character %d", name, describe(r), pos))
			} else {
				toks = append(toks, string(r))
			}
		}
		i += size
	}
	return toks, hidden
}

// wrapTokens joins tokens, breaking lines longer than width without ever
// splitting a mark.
func wrapTokens(toks []string, width int) string {
	var b strings.Builder
	col := 0
	for _, t := range toks {
		if t == "\n" {
			b.WriteString(t)
			col = 0
			continue
		}
		n := utf8.RuneCountInString(t)
		if width > 0 && col > 0 && col+n > width {
			b.WriteString("\n" + string(markWrap) + " ")
			col = 2
		}
		b.WriteString(t)
		col += n
	}
	return b.String()
}

// preview cuts text to about limit characters, at a line break when one
// is near, and says so on a line of its own.
func preview(text string, limit int) string {
	total := utf8.RuneCountInString(text)
	note := func(shown int) string {
		return fmt.Sprintf("\n… %d more characters (of %d) are not shown here: the whole command is attached", total-shown, total)
	}
	keep := max(limit-utf8.RuneCountInString(note(total)), limit/2)
	s := string([]rune(text)[:keep])
	if o := strings.LastIndex(s, string(markOpen)); o >= 0 && !strings.ContainsRune(s[o:], markClose) {
		s = s[:o] // do not cut inside a ⟨…⟩ mark
	}
	if nl := strings.LastIndexByte(s, '\n'); nl > len(s)/2 {
		s = s[:nl]
	}
	return s + note(utf8.RuneCountInString(s))
}

// controlNames are the usual names of control characters.
var controlNames = map[rune]string{
	0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0B: "VT", 0x0C: "FF", 0x0D: "CR", 0x1B: "ESC", 0x7F: "DEL",
}

// hiddenRune reports whether r would be invisible, move the cursor or
// reorder text on a screen, and names it. Tab and newline are not
// hidden; the caller decides about them.
func hiddenRune(r rune) (string, bool) {
	if name, ok := controlNames[r]; ok {
		return name, true
	}
	switch {
	case r < 0x20 || (r >= 0x7F && r <= 0x9F):
		return fmt.Sprintf("U+%04X", r), true
	case r == ' ':
		return "", false
	case unicode.In(r, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs, unicode.Variation_Selector),
		invisibleLetters[r], !unicode.IsPrint(r) && !unicode.IsGraphic(r):
		return fmt.Sprintf("U+%04X", r), true
	}
	return "", false
}

// invisibleLetters are characters of other categories that render as
// blank space.
var invisibleLetters = map[rune]bool{
	0x034F: true, 0x115F: true, 0x1160: true, 0x17B4: true, 0x17B5: true, 0x2800: true, 0x3164: true, 0xFFA0: true, 0xFFFC: true,
}

// describe adds a name to the characters people ask about most.
func describe(r rune) string {
	switch {
	case r == 0x200B:
		return " ZERO WIDTH SPACE"
	case r == 0x200C || r == 0x200D:
		return " ZERO WIDTH JOINER/NON-JOINER"
	case r == 0xFEFF:
		return " BYTE ORDER MARK"
	case r == 0xA0:
		return " NO-BREAK SPACE"
	case r == 0x1B:
		return " (escape: starts terminal control sequences)"
	case (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C:
		return " (bidirectional control: reorders the text around it)"
	}
	return ""
}
