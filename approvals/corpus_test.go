package approvals

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readCorpus reads one command per line; blank lines and lines starting
// with "#" are skipped, and a line starting with "q:" holds a Go-quoted
// string (for newlines and invisible characters).
func readCorpus(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if q, ok := strings.CutPrefix(line, "q:"); ok {
			s, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
			line = s
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func defaultPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := NewPolicy(PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBypassCorpus: every bypass attempt is approve or deny, never allow.
func TestBypassCorpus(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	cmds := readCorpus(t, "testdata/bypass.txt")
	if len(cmds) < 60 {
		t.Fatalf("the bypass corpus has %d commands, want at least 60", len(cmds))
	}
	counts := map[Action]int{}
	for _, c := range cmds {
		d := p.Check(Target{Host: "web-1"}, c)
		counts[d.Action]++
		if d.Action == Allow {
			t.Errorf("bypass allowed: %q\n  reasons: %s", c, strings.Join(d.Reasons, "; "))
		}
	}
	t.Logf("bypass corpus: %d commands: %d deny, %d approve, %d allow", len(cmds), counts[Deny], counts[Approve], counts[Allow])
}

// TestHarmlessCorpus: at least 95% of everyday read-only commands are
// allowed.
func TestHarmlessCorpus(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	cmds := readCorpus(t, "testdata/harmless.txt")
	if len(cmds) < 200 {
		t.Fatalf("the harmless corpus has %d commands, want at least 200", len(cmds))
	}
	allowed := 0
	for _, c := range cmds {
		d := p.Check(Target{Host: "web-1"}, c)
		if d.Action == Allow {
			allowed++
			continue
		}
		t.Logf("not allowed (%s): %q\n    %s", d.Action, c, strings.Join(d.Reasons, "\n    "))
	}
	ratio := float64(allowed) / float64(len(cmds))
	t.Logf("harmless corpus: %d of %d allowed (%.1f%%)", allowed, len(cmds), 100*ratio)
	if ratio < 0.95 {
		t.Errorf("only %.1f%% of harmless commands allowed, want at least 95%%", 100*ratio)
	}
}

// TestDialectCorpusAllowed: the lines other shells would split into
// several commands only print under bash, which runs them, so they stay
// allowed (TestCorpusParsesAsTheRunnerShell checks bash reads them so).
func TestDialectCorpusAllowed(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	for _, c := range readCorpus(t, "testdata/dialect.txt") {
		if d := p.Check(Target{Host: "web-1"}, c); d.Action != Allow {
			t.Errorf("%q: %s, want allow\n  %s", c, d.Action, strings.Join(d.Reasons, "\n  "))
		}
	}
}
