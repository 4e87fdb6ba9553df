package redact

//go:generate go run ./internal/gitleaksgen -version v8.30.1 -skip private-key -o rules_gitleaks.go

import (
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// ruleSpec is one credential format as data: gitleaks's shape, so its
// default rules can be taken as they are.
type ruleSpec struct {
	ID    string
	Regex string
	// Keywords are lower-case strings one of which a line must contain
	// for the regex to be tried: the cheap prefilter.
	Keywords []string
	// Entropy, when set, is the Shannon entropy (bits per byte) the secret
	// must exceed, so "password=changeme" style placeholders in a
	// high-entropy rule do not match.
	Entropy float64
	// SecretGroup is the capture group holding the secret; 0 means the
	// first non-empty group, or the whole match when there is none.
	SecretGroup int
	Allow       []allowlist
}

// allowlist says when a match is not a secret after all (gitleaks's
// semantics: any regex or stopword allows it, or all of them with And).
type allowlist struct {
	// Target is what Regexes test: "" the secret, "match" the whole
	// match, "line" the line.
	Target    string
	Regexes   []string
	Stopwords []string
	And       bool
}

// ownRules are the formats this package adds to gitleaks's: its generic
// rule needs high entropy, and an operator's password is often a word.
// They come after the specific rules, so a Slack token in SLACK_TOKEN=...
// reads [redacted slack-bot-token].
var ownRules = []ruleSpec{
	{
		ID: "url-password",
		// scheme://user:pass@host keeps the user and host.
		Regex:    `(?i)\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@'"<>]+:([^\s@/'"<>]+)@[^\s@]`,
		Keywords: []string{"://"},
		Allow:    []allowlist{{Regexes: []string{`^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$`, `^\*+$`, `^\[redacted`}}},
	},
	{
		ID: "aws-secret-key",
		Regex: `(?i)aws[a-z0-9_.-]{0,20}(?:secret|sk)[a-z0-9_.-]{0,20}["']?[ \t]*(?:=|:|=>)[ \t]*["']?` +
			`([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`,
		Keywords: []string{"aws"},
	},
	{
		ID:       "authorization-header",
		Regex:    `(?i)\b(?:authorization|x-api-key|api-key)["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|digest)[ \t]+)?([^\s"',;]{8,})`,
		Keywords: []string{"authorization", "api-key"},
	},
	{
		ID:       "bearer-token",
		Regex:    `(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)`,
		Keywords: []string{"bearer"},
	},
	{
		ID: "secret-assignment",
		// password=..., "password": "...", password: ... (YAML), and the
		// same for secret, token, api key and credentials. The key must be
		// followed by a separator and a value, so "password" in prose, or
		// "Password:" awaiting input, is left alone.
		Regex: `(?i)(?:passw(?:or)?d|passphrase|secret|token|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|private[_.-]?key|credentials?)[a-z0-9_.-]*` +
			`["']?[ \t]*(?:=|:|=>)[ \t]*` +
			`(?:"([^"\n]+)"|'([^'\n]+)'|(\$\{[^}\s]*\}|[^\s"',;&<>{}\[\]]+))`,
		Keywords: []string{"pass", "secret", "token", "api", "access", "auth", "private", "credential"},
		Allow: []allowlist{{Regexes: []string{
			`^[0-9]+$`, // max_tokens: 1024
			`(?i)^(?:true|false|null|none|nil|yes|no|on|off|required|optional|\*+)$`,
			`^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$`, // a variable reference
			`^\{\{.*\}\}$`,                     // a template
			`^<[^>]*>$`,                        // <your-token>
			`^\[redacted`,                      // already redacted
			`^[a-z-]+\([^)]*\)$`,               // a call, not a value
			`^\$\{[^}]*\}$`,                    // ${VAR:-default}
		}}, {
			// The passwd tool's own messages.
			Target: "line", Regexes: []string{`^passwd: `},
		}},
	},
}

// lazyPrefix starts about 100 gitleaks rules: the name before the
// keyword, as in MY_SERVICE_token=... . It only widens the match, never
// changes the secret, and it makes Go's regexp engine try up to 50 starts
// per byte: it is cut off at compile time and the match widened back by
// hand (matchStart) where an allowlist looks at it.
const lazyPrefix = `(?i)[\w.-]{0,50}?`

// lazyRegexp is a rule's expression, compiled the first time a line
// needs it (issue 28 item 8): most rules wait for a keyword that few
// lines hold, and compiling all ~200 at start held 3.2 MB of the bot's
// 4.4 MB heap. TestEveryRuleCompiles compiles them all.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

// rule is a compiled ruleSpec.
type rule struct {
	id     string
	re     *lazyRegexp
	prefix bool // lazyPrefix was cut off re
	// anchored, when set, is re matched only where one of its keywords
	// starts, as every match does: the line is not scanned from each byte.
	anchored  *lazyRegexp
	wordStart bool // re starts with \b, which anchoring loses
	entropy   float64
	group     int
	allow     []compiledAllow
	global    bool // gitleaks's global allowlist applies
}

type compiledAllow struct {
	target    string
	regexes   []*regexp.Regexp
	stopwords []string
	and       bool
}

// ruleSet is the compiled rules and their keyword index.
type ruleSet struct {
	rules []rule
	// always are rules without keywords, tried on every line.
	always []int
	// kw finds the keywords in a line; kwRules[k] are the rules keyword k
	// triggers.
	kw      *matcher
	kwRules [][]int
	kwIndex map[string]int // only while compiling
	global  compiledAllow
}

// defaultRules compiles once, on first use: about 220 regexes.
var defaultRules = sync.OnceValue(func() *ruleSet {
	return compileRules(append(append([]ruleSpec{}, gitleaksRules...), ownRules...), len(gitleaksRules))
})

// compileRules compiles specs; the first nGitleaks get gitleaks's global
// allowlist.
func compileRules(specs []ruleSpec, nGitleaks int) *ruleSet {
	rs := &ruleSet{global: compileAllow(gitleaksGlobal)}
	// Specific rules first: on a tie, the first rule names the redaction.
	var late []int
	for i, s := range specs {
		if s.ID == "generic-api-key" || s.ID == "secret-assignment" {
			late = append(late, i)
			continue
		}
		rs.add(s, i < nGitleaks)
	}
	for _, i := range late {
		rs.add(specs[i], i < nGitleaks)
	}
	words := make([]string, len(rs.kwRules))
	for k, n := range rs.kwIndex {
		words[n] = k
	}
	rs.kw = newMatcher(words)
	rs.kwIndex = nil
	return rs
}

// Where opsbot departs from gitleaks's data, which is tuned for scanning
// repositories, where a documented example key is noise. In a chat, a
// key that a command printed is redacted whatever it looks like: AWS's
// own example key id (AKIAIOSFODNN7EXAMPLE, which gitleaks lets through
// by its ".+EXAMPLE$" allowlist) is what tests, demos and red teams seed.
var (
	// renamed shows a rule under the name people use for the thing.
	renamed = map[string]string{"aws-access-token": "aws-access-key"}
	// noAllowlist are rules whose gitleaks allowlist is not used.
	noAllowlist = map[string]bool{"aws-access-token": true}
)

// add compiles one rule and indexes its keywords.
func (rs *ruleSet) add(s ruleSpec, gitleaks bool) {
	re, prefix := strings.CutPrefix(s.Regex, lazyPrefix)
	if prefix {
		re = "(?i)" + re
	}
	id := s.ID
	if n, ok := renamed[id]; ok {
		id = n
	}
	if noAllowlist[s.ID] {
		s.Allow = nil
	}
	r := rule{id: id, re: &lazyRegexp{src: re}, prefix: prefix, entropy: s.Entropy, group: s.SecretGroup, global: gitleaks}
	if ok, wordStart := startsWithKeyword(re, s.Keywords); ok {
		r.anchored, r.wordStart = &lazyRegexp{src: `^(?:` + re + `)`}, wordStart
	}
	for _, a := range s.Allow {
		r.allow = append(r.allow, compileAllow(a))
	}
	idx := len(rs.rules)
	rs.rules = append(rs.rules, r)
	if len(s.Keywords) == 0 {
		rs.always = append(rs.always, idx)
	}
	if rs.kwIndex == nil {
		rs.kwIndex = map[string]int{}
	}
	for _, k := range s.Keywords {
		k = strings.ToLower(k)
		n, ok := rs.kwIndex[k]
		if !ok {
			n = len(rs.kwRules)
			rs.kwIndex[k] = n
			rs.kwRules = append(rs.kwRules, nil)
		}
		rs.kwRules[n] = append(rs.kwRules[n], idx)
	}
}

func compileAllow(a allowlist) compiledAllow {
	c := compiledAllow{target: a.Target, and: a.And}
	for _, re := range a.Regexes {
		c.regexes = append(c.regexes, regexp.MustCompile(re))
	}
	for _, w := range a.Stopwords {
		c.stopwords = append(c.stopwords, strings.ToLower(w))
	}
	return c
}

// allows reports whether the allowlist lets this match through.
func (a *compiledAllow) allows(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	regexOK := false
	for _, re := range a.regexes {
		if re.MatchString(target) {
			regexOK = true
			break
		}
	}
	stopOK := false
	if len(a.stopwords) > 0 {
		lower := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(lower, w) {
				stopOK = true
				break
			}
		}
	}
	if a.and {
		return (len(a.regexes) == 0 || regexOK) && (len(a.stopwords) == 0 || stopOK)
	}
	return regexOK || stopOK
}

// find appends the secret spans rule r finds in line.
func (rs *ruleSet) find(r *rule, line string, prio int, spans []span) []span {
	for _, m := range r.re.get().FindAllStringSubmatchIndex(line, -1) {
		spans = rs.keep(r, line, m, prio, spans)
	}
	return spans
}

// findAt appends the span of a match of an anchored rule starting at at,
// where one of its keywords starts.
func (rs *ruleSet) findAt(r *rule, line string, at, prio int, spans []span) []span {
	if r.wordStart && at > 0 && isTokenByte(line[at-1]) && line[at-1] != '-' {
		return spans // \b before a word byte needs a non-word byte before it
	}
	m := r.anchored.get().FindStringSubmatchIndex(line[at:])
	if m == nil {
		return spans
	}
	for i := range m {
		if m[i] >= 0 {
			m[i] += at
		}
	}
	return rs.keep(r, line, m, prio, spans)
}

// keep appends the secret of match m unless its entropy is too low or an
// allowlist lets it through.
func (rs *ruleSet) keep(r *rule, line string, m []int, prio int, spans []span) []span {
	start, end := secretBounds(r.group, m)
	if start < 0 || start == end {
		return spans
	}
	secret := line[start:end]
	if r.entropy != 0 && shannon(secret) <= r.entropy {
		return spans
	}
	if r.allowed(secret, line[r.matchStart(line, m[0]):m[1]], line) || (r.global && rs.global.allows(secret, "", "")) {
		return spans
	}
	return append(spans, span{start: start, end: end, label: r.id, prio: prio})
}

// matchStart is where the match would start with lazyPrefix in place.
func (r *rule) matchStart(line string, start int) int {
	if !r.prefix {
		return start
	}
	for n := 0; n < 50 && start > 0 && (isTokenByte(line[start-1]) || line[start-1] == '.'); n++ {
		start--
	}
	return start
}

func (r *rule) allowed(secret, match, line string) bool {
	for i := range r.allow {
		if r.allow[i].allows(secret, match, line) {
			return true
		}
	}
	return false
}

// secretBounds picks the secret out of a match: the group asked for, else
// the first non-empty group, else the whole match (gitleaks's choice).
func secretBounds(group int, m []int) (int, int) {
	if group > 0 {
		if 2*group+1 < len(m) {
			return m[2*group], m[2*group+1]
		}
		return -1, -1
	}
	for g := 2; g+1 < len(m); g += 2 {
		if m[g] >= 0 && m[g+1] > m[g] {
			return m[g], m[g+1]
		}
	}
	return m[0], m[1]
}

// shannon is the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// startsWithKeyword reports whether every match of re starts with one of
// keywords, so matching only where a keyword starts finds all of them:
// each string its first element can match, ignoring case, must begin
// with a keyword. wordStart says a \b comes first, which findAt checks.
func startsWithKeyword(re string, keywords []string) (ok, wordStart bool) {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false, false
	}
	for {
		if t.Op == syntax.OpCapture {
			t = t.Sub[0]
			continue
		}
		if t.Op != syntax.OpConcat || len(t.Sub) == 0 {
			break
		}
		subs := t.Sub
		if subs[0].Op == syntax.OpWordBoundary && len(subs) > 1 {
			wordStart, subs = true, subs[1:]
		}
		t = subs[0]
	}
	words, ok := expand(t)
	if !ok || len(words) == 0 {
		return false, false
	}
	for _, w := range words {
		if w == "" || !isTokenByte(w[0]) && wordStart {
			return false, false
		}
		if !slices.ContainsFunc(keywords, func(k string) bool { return strings.HasPrefix(w, strings.ToLower(k)) }) {
			return false, false
		}
	}
	return true, wordStart
}

// expand lists the lower-cased strings t matches, when they are few.
func expand(t *syntax.Regexp) ([]string, bool) {
	const most = 64
	switch t.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(t.Rune))}, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(t.Rune); i += 2 {
			for r := t.Rune[i]; r <= t.Rune[i+1]; r++ {
				if out = append(out, strings.ToLower(string(r))); len(out) > most {
					return nil, false
				}
			}
		}
		return out, true
	case syntax.OpCapture:
		return expand(t.Sub[0])
	case syntax.OpQuest:
		sub, ok := expand(t.Sub[0])
		return append(sub, ""), ok
	case syntax.OpAlternate:
		var out []string
		for _, sub := range t.Sub {
			words, ok := expand(sub)
			if !ok || len(out)+len(words) > most {
				return nil, false
			}
			out = append(out, words...)
		}
		return out, true
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range t.Sub {
			words, ok := expand(sub)
			if !ok || len(out)*len(words) > most {
				return nil, false
			}
			var next []string
			for _, a := range out {
				for _, b := range words {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out, true
	}
	return nil, false
}
