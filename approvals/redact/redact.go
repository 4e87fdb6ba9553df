package redact

import (
	"slices"
	"strings"
	"sync"
)

// OwnLabel names a redacted value that opsbot itself holds.
const OwnLabel = "opsbot-secret"

// MinSecretLen is the shortest own secret Register accepts: a shorter
// value would redact ordinary words.
const MinSecretLen = 8

// Redactor replaces secrets in text with "[redacted RULE]". It knows
// gitleaks's credential formats, a few of its own (URL passwords,
// password= assignments, private keys) and the exact values registered
// with Register. Its methods are safe for concurrent use; the zero value
// is not usable, call New.
type Redactor struct {
	rules *ruleSet
	mu    sync.RWMutex
	own   []string // longest first, so a secret containing another wins
}

// New returns a Redactor with the default rules and the given own secrets
// (see Register).
func New(secrets ...string) *Redactor {
	r := &Redactor{rules: defaultRules()}
	r.Register(secrets...)
	return r
}

// Register adds exact values to redact wherever they appear, e.g. the API
// keys and tokens from config and environment. Values shorter than
// MinSecretLen are ignored; a value spanning lines is registered line by
// line, as text is redacted a line at a time.
func (r *Redactor) Register(secrets ...string) {
	var add []string
	for _, s := range secrets {
		for _, part := range strings.Split(s, "\n") {
			part = strings.TrimSpace(part)
			if len(part) >= MinSecretLen {
				add = append(add, part)
			}
		}
	}
	if len(add) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range add {
		if !slices.Contains(r.own, s) {
			r.own = append(r.own, s)
		}
	}
	slices.SortStableFunc(r.own, func(a, b string) int { return len(b) - len(a) })
}

// String redacts a whole text. It gives the same result as streaming the
// text through a Stream in any chunks.
func (r *Redactor) String(s string) string {
	var b strings.Builder
	var st lineState
	for len(s) > 0 {
		n, _ := nextSegment(s, true)
		r.segment(&b, &st, s[:n])
		s = s[n:]
	}
	return b.String()
}

// Bytes is String for a byte slice.
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }

// span is a part of a line to redact.
type span struct {
	start, end int
	label      string
	prio       int
}

// line redacts one line (without its newline) outside a private key.
func (r *Redactor) line(b *strings.Builder, line string) {
	spans := r.spans(line)
	if len(spans) == 0 {
		b.WriteString(line)
		return
	}
	slices.SortFunc(spans, func(a, c span) int {
		if a.start != c.start {
			return a.start - c.start
		}
		return a.prio - c.prio
	})
	at := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		cur.end = wordEnd(line, cur.end)
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, wordEnd(line, spans[i].end))
		}
		b.WriteString(line[at:cur.start])
		b.WriteString("[redacted ")
		b.WriteString(cur.label)
		b.WriteString("]")
		at = cur.end
	}
	b.WriteString(line[at:])
}

// spans finds every secret in line.
func (r *Redactor) spans(line string) []span {
	var spans []span
	r.mu.RLock()
	for _, s := range r.own {
		for off := 0; ; {
			i := strings.Index(line[off:], s)
			if i < 0 {
				break
			}
			spans = append(spans, span{start: off + i, end: off + i + len(s), label: OwnLabel, prio: -1})
			off += i + len(s)
		}
	}
	r.mu.RUnlock()
	rs := r.rules
	var seen []bool
	try := func(idx int) {
		if seen == nil {
			seen = make([]bool, len(rs.rules))
		}
		if !seen[idx] {
			seen[idx] = true
			spans = rs.find(&rs.rules[idx], line, idx, spans)
		}
	}
	for _, idx := range rs.always {
		try(idx)
	}
	rs.kw.each(line, func(w int32, end int) {
		for _, idx := range rs.kwRules[w] {
			if rule := &rs.rules[idx]; rule.anchored != nil {
				spans = rs.findAt(rule, line, end-rs.kw.lens[w], idx, spans)
			} else {
				try(idx)
			}
		}
	})
	return spans
}

// wordEnd extends a redaction that stops inside a token to the token's
// end: some rules match a token's known prefix only (xoxa-2-123...), and
// the rest of a secret is no less secret.
func wordEnd(line string, end int) int {
	for end < len(line) && isTokenByte(line[end]) {
		end++
	}
	return end
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
