package nsverify

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/policy"
)

// fuzzDeadline stops a fuzzed command early: the property is about what it
// changes, not whether it finishes.
const fuzzDeadline = 2 * time.Second

// fuzzSeeds are the red team's lines, the dialect lines and every
// thirty-second harmless one: the fuzzer runs every seed before it mutates, and
// make test gives it 20 s in all.
func fuzzSeeds(t testing.TB) []string {
	var seeds []string
	for _, l := range readCorpora(t, "testdata/redteam.txt", "../testdata/dialect.txt") {
		seeds = append(seeds, l.Command)
	}
	for i, l := range readCorpora(t, "../testdata/harmless.txt") {
		if i%32 == 0 {
			seeds = append(seeds, l.Command)
		}
	}
	return seeds
}

// FuzzAllowedIsHarmless: if the policy allows a command line, running it
// in the sandbox changes nothing and connects nowhere but loopback.
// make test runs it for a short while, make fuzz for longer.
func FuzzAllowedIsHarmless(f *testing.F) {
	s, p := newSandbox(f), defaultPolicy(f)
	s.Deadline = fuzzDeadline
	for _, c := range fuzzSeeds(f) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, command string) {
		d := p.Check(target, command)
		if d.Action != policy.Allow {
			return
		}
		if strings.ContainsRune(command, 0) {
			t.Fatalf("%q holds a NUL byte, yet the policy allows it", command)
		}
		r, err := s.Run(t.Context(), command)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Harmless() {
			t.Errorf("classified allow, but the run changed something:\n%s\n  policy: %s", r, strings.Join(d.Reasons, "; "))
		}
	})
}
