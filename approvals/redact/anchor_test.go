package redact

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// TestAnchoredRulesFindWhatScanningFinds checks the speed-up of matching
// keyword rules only where a keyword starts: every secret a full scan of
// the line finds, the anchored attempts find too.
func TestAnchoredRulesFindWhatScanningFinds(t *testing.T) {
	t.Parallel()
	rs := defaultRules()
	lines := strings.Split(redacttest.Output()+typicalOutput(8<<10), "\n")
	lines = append(lines,
		"adafruit_key = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'",
		"MY_API_TOKEN: 'Zq8Rk2VtWm9XpLc4NbHy7JdF3sQ1'",
		"curl -H 'Authorization: Bearer Zq8Rk2VtWm9XpLc4NbHy7JdF3sQ1' https://x",
		"id=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.4Xq9vPz7Kc2LmR8tWb1NyHs3Jd6Fg0Ua5QiOeZxYwVk",
		"xkeyeyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.4Xq9vPz7Kc2LmR8tWb1NyHs3Jd6Fg0Ua5QiOeZxYwVk",
		"password=Tr0ub4dor-Xk9q secret: ${X} token = \"abc def\"",
	)
	anchored := 0
	for i := range rs.rules {
		r := &rs.rules[i]
		if r.anchored == nil {
			continue
		}
		anchored++
		for _, line := range lines {
			scanned := rs.find(r, line, 0, nil)
			var found []span
			rs.kw.each(line, func(w int32, end int) {
				for _, idx := range rs.kwRules[w] {
					if idx == i {
						found = rs.findAt(r, line, end-rs.kw.lens[w], 0, found)
					}
				}
			})
			for _, s := range scanned {
				if !covered(s, found) {
					t.Errorf("rule %s: scan finds %q in %q, anchored matching does not", r.id, line[s.start:s.end], line)
				}
			}
		}
	}
	if anchored < 50 {
		t.Errorf("only %d rules anchored; the prefilter speed-up is lost", anchored)
	}
}

func covered(s span, spans []span) bool {
	for _, o := range spans {
		if o.start <= s.start && s.end <= o.end {
			return true
		}
	}
	return false
}
