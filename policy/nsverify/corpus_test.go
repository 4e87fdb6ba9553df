package nsverify

import (
	"strconv"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/policy"
)

// target is where the corpus tests classify commands, as in package
// policy's own corpus tests.
var target = policy.Target{Host: "web-1"}

// corpusFiles are every corpus: the everyday commands, the lines shells
// read differently, the bypass attempts and the red team's exploits.
var corpusFiles = []string{"../testdata/harmless.txt", "../testdata/dialect.txt", "../testdata/bypass.txt", "testdata/redteam.txt"}

func defaultPolicy(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readCorpora(t testing.TB, names ...string) []Line {
	t.Helper()
	var lines []Line
	for _, name := range names {
		l, err := ReadCorpus(name)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l...)
	}
	return lines
}

// TestAllowedCorpusChangesNothing is the differential check of the
// classifier against reality: every corpus command the policy allows runs
// for real in the sandbox, and none may change a file, reach beyond
// loopback, make a privileged call or change the network namespace.
func TestAllowedCorpusChangesNothing(t *testing.T) {
	t.Parallel()
	s, p := newSandbox(t), defaultPolicy(t)
	lines := readCorpora(t, corpusFiles...)
	var allowed []Line
	var commands []string
	for _, l := range lines {
		if p.Check(target, l.Command).Action != policy.Allow {
			continue
		}
		if strings.ContainsRune(l.Command, 0) { // no argv holds a NUL; bash could never run it
			t.Errorf("%s: %q holds a NUL byte, yet the policy allows it", l.Where, l.Command)
			continue
		}
		allowed = append(allowed, l)
		commands = append(commands, l.Command)
	}
	if len(allowed) < 200 {
		t.Fatalf("only %d corpus commands are allowed; the harmless corpus alone should give 300", len(allowed))
	}
	var st stats
	for i, r := range runAll(t, s, commands) {
		st.add(r)
		if !r.Harmless() {
			t.Errorf("%s: classified allow, but the run changed something:\n%s", allowed[i].Where, r)
		}
	}
	t.Logf("%d corpus lines, %d allowed and run: %s", len(lines), len(allowed), st)
}

// stats are the figures docs/BENCHMARKS.md records.
type stats struct {
	runs, exit0, notFound, timedOut, changed, egress, loopback, copied int
}

func (s *stats) add(r Report) {
	s.runs++
	switch {
	case r.Exit == 0:
		s.exit0++
	case r.Exit == 127:
		s.notFound++
	case r.TimedOut():
		s.timedOut++
	}
	if len(r.Changes) > 0 || r.NetBefore != r.NetAfter || len(r.Privileged) > 0 {
		s.changed++
	}
	if len(r.Egress) > 0 {
		s.egress++
	}
	s.loopback += len(r.Loopback)
	s.copied += len(r.Copied)
}

func (s stats) String() string {
	return strings.Join([]string{
		itoa(s.exit0) + " exited 0", itoa(s.notFound) + " program not installed", itoa(s.timedOut) + " stopped at the deadline",
		itoa(s.changed) + " changed state", itoa(s.egress) + " attempted egress",
		itoa(s.loopback) + " loopback connects", itoa(s.copied) + " files opened for writing unchanged",
	}, ", ")
}

// TestRedTeamCaught: each of issue 10's exploits is classified approve or
// deny, or, if allowed, changes nothing when run. Every exploit runs in
// the sandbox whatever its class, and those marked live must really change
// state there: the exploit is real, and the harness sees it.
func TestRedTeamCaught(t *testing.T) {
	t.Parallel()
	s, p := newSandbox(t), defaultPolicy(t)
	lines := readCorpora(t, "testdata/redteam.txt")
	var commands []string
	for _, l := range lines {
		commands = append(commands, l.Command)
	}
	caught, live := 0, 0
	for i, r := range runAll(t, s, commands) {
		l, d := lines[i], p.Check(target, lines[i].Command)
		switch {
		case d.Action != policy.Allow:
			caught++
		case !r.Harmless():
			t.Errorf("%s: red-team exploit classified allow, and it changed state:\n%s", l.Where, r)
		}
		if !r.Harmless() {
			live++
		}
		if l.Live && r.Harmless() {
			t.Errorf("%s: marked live, but its run changed nothing here; the seed tree no longer exercises it:\n%s", l.Where, r)
		}
		t.Logf("%-7s harmless=%-5t %q", d.Action, r.Harmless(), l.Command)
	}
	t.Logf("red team: %d exploits, %d classified approve or deny; %d really changed state in the sandbox", len(lines), caught, live)
}

func itoa(n int) string { return strconv.Itoa(n) }
