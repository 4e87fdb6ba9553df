package policy

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

// fleetPolicy is the default policy as a deployment wires it: an
// inventory (web-1, web1…3, db01 at 10.0.0.5), the company's domains and
// network and the local services its hosts run in policy.egress_allow,
// opsbot's own listener, and opsbot's own files.
func fleetPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := NewPolicy(PolicyConfig{
		EgressAllow: []string{"example.com", "api.internal", "10.0.0.0/8",
			"localhost:80", "localhost:8080", "127.0.0.1:8080", "localhost:8443", "localhost:9090", "127.0.0.1:8500", "localhost:5432"},
		KnownHosts:    []string{"web-1", "web1", "web2", "web3", "db01", "10.0.0.5"},
		KnownServices: []string{"127.0.0.1:8080", "localhost:8080"},
		OwnSecrets:    []string{"/etc/opsbot/opsbot.yaml", "/var/lib/opsbot/opsbot.db*", "opsbot.db*", "/var/lib/opsbot/data"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExfilCorpus: every attempt to read a secret or to send data to a
// destination the config does not know gets its expected verdict, on an
// SSH host and on the bot's own host; none is allowed.
func TestExfilCorpus(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	lines := readCorpus(t, "testdata/exfil.txt")
	if len(lines) < 60 {
		t.Fatalf("the exfiltration corpus has %d commands, want at least 60", len(lines))
	}
	allowed := 0
	for _, line := range lines {
		verdict, cmd, _ := strings.Cut(line, " ")
		want, err := ParseAction(verdict)
		if err != nil || want == Allow {
			t.Fatalf("%q: the line must start with approve or deny", line)
		}
		if q, ok := strings.CutPrefix(cmd, "q:"); ok {
			if cmd, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
		for _, host := range []string{"web-1", "local"} {
			d := p.Check(Target{Host: host}, cmd)
			if d.Action == Allow {
				allowed++
			}
			if d.Action != want {
				t.Errorf("on %s: %q: %s, want %s\n  %s", host, cmd, d.Action, want, strings.Join(d.Reasons, "\n  "))
			}
		}
	}
	t.Logf("exfiltration corpus: %d commands on 2 hosts: %d allowed", len(lines), allowed)
}

// TestHarmlessCorpus: at least 95% of everyday read-only commands are
// allowed.
func TestHarmlessCorpus(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
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
