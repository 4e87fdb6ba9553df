package redact

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxLine bounds what a Stream holds back: text is redacted a line at a
// time, so a Stream keeps the unfinished last line, and a line longer than
// MaxLine is redacted in pieces of at most MaxLine bytes, cut after a
// blank, comma or semicolon in its second half where there is one (so a
// token is rarely split) or else at MaxLine. Every credential format but a
// private key fits in a line far shorter: the longest bounded gitleaks
// match is under 1 KiB. Private keys span lines and can exceed any
// bound; they are followed by a state machine instead (BEGIN opens a
// block that hides every line until END, see lineState), so they cost no
// hold-back at all.
const MaxLine = 4096

// nextSegment returns the length of the next segment of s, with its
// newline, or ok false when s does not hold one yet and more may come
// (final says no more text will). The cut depends only on the text, never
// on how it arrived, which is what makes a Stream equal String.
func nextSegment(s string, final bool) (n int, ok bool) {
	window := s[:min(len(s), MaxLine+1)]
	if i := strings.IndexByte(window, '\n'); i >= 0 {
		return i + 1, true
	}
	if len(s) > MaxLine {
		return cutPoint(s), true
	}
	return len(s), final && len(s) > 0
}

// cutPoint is where a line of more than MaxLine bytes is cut.
func cutPoint(s string) int {
	if i := strings.LastIndexAny(s[MaxLine/2:MaxLine], " \t,;"); i >= 0 {
		return MaxLine/2 + i + 1
	}
	n := MaxLine
	for n > MaxLine-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n-- // do not split a character
	}
	return n
}

// lineState is what redaction carries from one segment to the next.
type lineState struct {
	inKey   bool // inside a private key block
	midLine bool // the next segment continues a cut line
}

var (
	keyBegin = regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	keyEnd   = regexp.MustCompile(`(?i)-----END[ A-Z0-9_-]{0,100}-----`)
	// keyLine is a line of a key's body: base64, an armor header
	// (Proc-Type: ..., DEK-Info: ...) or blank.
	keyLine = regexp.MustCompile(`^[ \t]*(?:[A-Za-z0-9+/=]*|[A-Za-z-]+: .*)[ \t\r]*$`)
)

// KeyLabel names a redacted private key.
const KeyLabel = "private-key"

// segment redacts one segment (a line, or a piece of a long one) into b.
func (r *Redactor) segment(b *strings.Builder, st *lineState, seg string) {
	text, nl := strings.CutSuffix(seg, "\n")
	cont := st.midLine
	st.midLine = !nl
	if r.keyAware(b, st, text, cont) && nl {
		b.WriteByte('\n')
	}
}

// keyAware redacts text, replacing a private key block, from BEGIN to END
// across lines, with one "[redacted private-key]". It reports whether the
// line's newline is kept: lines inside a block vanish with it. A block
// whose END never comes (head -5 id_rsa) ends at the first line that is
// not key material, so the output after it is still shown.
func (r *Redactor) keyAware(b *strings.Builder, st *lineState, text string, cont bool) bool {
	for {
		if st.inKey {
			if loc := keyEnd.FindStringIndex(text); loc != nil {
				st.inKey, text, cont = false, text[loc[1]:], true
				continue
			}
			if cont || keyLine.MatchString(text) {
				return false
			}
			st.inKey = false
		}
		var loc []int
		if strings.Contains(text, "-----") {
			loc = keyBegin.FindStringIndex(text)
		}
		if loc == nil {
			r.line(b, text)
			return true
		}
		r.line(b, text[:loc[0]])
		b.WriteString("[redacted " + KeyLabel + "]")
		st.inKey, text, cont = true, text[loc[1]:], true
	}
}
