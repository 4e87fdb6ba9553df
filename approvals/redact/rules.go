package redact

//go:generate go run ./internal/gitleaksgen -version v8.30.1 -skip private-key -o rules_gitleaks.go

import (
	"math"
	"regexp"
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
		Regex: `(?i)[a-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|private[_.-]?key|credentials?)[a-z0-9_.-]*` +
			`["']?[ \t]*(?:=|:|=>)[ \t]*` +
			`(?:"([^"\n]+)"|'([^'\n]+)'|(\$\{[^}\s]*\}|[^\s"',;&<>{}\[\]]+))`,
		Keywords: []string{"pass", "secret", "token", "key", "credential"},
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

// rule is a compiled ruleSpec.
type rule struct {
	id      string
	re      *regexp.Regexp
	entropy float64
	group   int
	allow   []compiledAllow
	global  bool // gitleaks's global allowlist applies
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

// add compiles one rule and indexes its keywords.
func (rs *ruleSet) add(s ruleSpec, gitleaks bool) {
	r := rule{id: s.ID, re: regexp.MustCompile(s.Regex), entropy: s.Entropy, group: s.SecretGroup, global: gitleaks}
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
	for _, m := range r.re.FindAllStringSubmatchIndex(line, -1) {
		start, end := secretBounds(r.group, m)
		if start < 0 || start == end {
			continue
		}
		secret := line[start:end]
		if r.entropy != 0 && shannon(secret) <= r.entropy {
			continue
		}
		if r.allowed(secret, line[m[0]:m[1]], line) || (r.global && rs.global.allows(secret, "", "")) {
			continue
		}
		spans = append(spans, span{start: start, end: end, label: r.id, prio: prio})
	}
	return spans
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
