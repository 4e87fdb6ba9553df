package policy

import (
	"strings"
	"testing"
)

func words(s string) []arg {
	var out []arg
	for _, f := range strings.Fields(s) {
		out = append(out, arg{src: f, val: f})
	}
	return out
}

// Each parser family reads a line as its tool does: which words are
// options, which are their values, which are operands, and which option
// is unknown (and so needs approval).
func TestOptionFamilies(t *testing.T) {
	t.Parallel()
	gnu := optSpec{short: "ab:c::", long: []string{"all", "block=", "color=?", "colour=?", "output="}}
	cases := []struct {
		name     string
		spec     optSpec
		line     string
		opts     string // name=value, space-separated
		operands string
		unknown  bool
	}{
		{"getopt: optional value only attached", gnu, "-c rm -rf", "c=", "rm", true},
		{"getopt: optional value attached", gnu, "-cEOF rm", "c=EOF", "rm", false},
		{"getopt: bundle, value in next word", gnu, "-ab FILE x", "a= b=FILE", "x", false},
		{"getopt: value attached in a bundle", gnu, "-abFILE x", "a= b=FILE", "x", false},
		{"getopt: long optional without =", gnu, "--color NAME", "color=", "NAME", false},
		{"getopt: long optional with =", gnu, "--color=always NAME", "color=always", "NAME", false},
		{"getopt: unique abbreviation", gnu, "--out /x y", "output=/x", "y", false},
		{"getopt: ambiguous abbreviation", gnu, "--col x", "", "", true},
		{"getopt: exact match beats prefix", optSpec{long: []string{"color", "colorful="}}, "--color x", "color=", "x", false},
		{"getopt: unknown long", gnu, "--reboot-argument status", "", "", true},
		{"getopt: unknown short", gnu, "-z x", "", "", true},
		{"getopt: value for a flag", gnu, "--all=1", "", "", true},
		{"getopt: options after operands", gnu, "x -a", "a=", "x", false},
		{"getopt: -- ends options", gnu, "-- -a", "", "-a", false},
		{"pflag: -o=value", optSpec{family: pflag, short: "o:", long: []string{"output="}}, "-o=yaml get", "o=yaml", "get", false},
		{"pflag: no abbreviation", optSpec{family: pflag, long: []string{"output="}}, "--out yaml", "", "", true},
		{"openssl: --name value", optSpec{family: openssl, long: []string{"in=", "out="}}, "--out /etc/passwd", "out=/etc/passwd", "", false},
		{"openssl: -name=value", optSpec{family: openssl, long: []string{"in=", "out="}}, "-out=/etc/passwd", "out=/etc/passwd", "", false},
		{"openssl: options end at the first operand", optSpec{family: openssl, long: []string{"noout"}}, "x -noout", "", "x -noout", false},
		{"ip: first in the tool's order", ipSpec, "-b - x", "batch=-", "x", false},
		{"ip: prefix of a later option", ipSpec, "-br a", "brief=", "a", false},
		{"ip: unknown", ipSpec, "-zz a", "", "", true},
		{"whole word: -d takes a value", redisSpec, "-d ping flushall", "d=ping", "flushall", false},
		{"whole word: no bundles", redisSpec, "-dx ping", "", "", true},
	}
	for _, tc := range cases {
		p := tc.spec.parse(words(tc.line))
		if (p.unknown != "") != tc.unknown {
			t.Errorf("%s: %q: unknown %q, want unknown=%v", tc.name, tc.line, p.unknown, tc.unknown)
			continue
		}
		if tc.unknown {
			continue
		}
		var opts []string
		for _, o := range p.opts {
			opts = append(opts, o.name+"="+o.value)
		}
		if got := strings.Join(opts, " "); got != tc.opts {
			t.Errorf("%s: %q: options %q, want %q", tc.name, tc.line, got, tc.opts)
		}
		if got := strings.Join(shows(p.operands), " "); got != tc.operands {
			t.Errorf("%s: %q: operands %q, want %q", tc.name, tc.line, got, tc.operands)
		}
	}
}

// A wrapper with an option the policy does not know still needs approval,
// and what it runs is still classified: a deny inside stays a deny.
func TestWrapperWithUnknownOptionKeepsInnerDeny(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	for _, c := range []string{"nice -5 rm -rf /", "timeout --bogus 5 rm -rf /", "xargs --bogus rm -rf /", "sudo --bogus rm -rf /"} {
		if d := p.Check(Target{Host: "web-1"}, c); d.Action != Deny {
			t.Errorf("%q: %s, want deny\n  %s", c, d.Action, strings.Join(d.Reasons, "\n  "))
		}
	}
}
