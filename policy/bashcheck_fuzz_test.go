package policy

import (
	"strings"
	"testing"
)

// fuzzSeeds sit where the parser and bash disagreed: comments,
// backslash-newlines, here-documents and here-strings, backquotes.
var fuzzSeeds = []string{
	"uptime # \\\nrm -rf /srv/data",
	"uptime # note \\\ndf -h",
	"uptime # \\\\\ndf -h",
	"echo `echo # \\\nuptime`",
	"echo $(uptime # \\\ndf)",
	"echo a\\\nb # c \\\nuptime",
	"echo \\\\\\\nuptime",
	"echo 'a # \\\nb'",
	"echo \"a # \\\nb\"",
	"echo $'a # \\\nb'",
	"cat <<EOF\nx # \\\nEOF\nuptime",
	"cat <<EOF\nx\\\nEOF\nuptime\nEOF",
	"cat <<'EOF'\nx\\\nEOF\nuptime",
	"cat <<-EOF\n\tx\n\tEOF\nuptime",
	"cat <<EOF; uptime\nx\nEOF",
	"cat <<E1 <<E2\na\nE1\nb\nE2",
	"cat <<< 'a # \\\nb'",
	"cat <<< a\\\nb",
	"bash <<EOF\necho \\`uptime\\`\nEOF",
	"bash <<< 'uptime # \\\ndf'",
	"sh -c 'uptime # x' \\\n; df",
	"for f in a b; do read x < \"$f\"; done # \\\nuptime",
}

// FuzzAllowedMeansBashAgrees: whenever the policy allows a line, real
// bash's own parse of it (bashReading: bash confined as nobody in its own
// namespaces, printing the line back with declare -f) finds the same
// simple commands, and the policy allows bash's rendering too.
func FuzzAllowedMeansBashAgrees(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	p, err := NewPolicy(PolicyConfig{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ours := p.Check(Target{Host: "web-1"}, line)
		if ours.Action != Allow {
			return
		}
		body, ok, err := bashReading(line)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("allowed, but bash does not parse %q: %s", line, strings.TrimSpace(body))
		}
		theirs := p.Check(Target{Host: "web-1"}, bashRendering(line, body))
		if !sameReading(ours, theirs) || theirs.Action != Allow {
			t.Fatalf("allowed, but bash reads %q otherwise:\n  bash's rendering: %q\n  policy: %q\n  bash:   %s %q", line, body, ours.Commands, theirs.Action, theirs.Commands)
		}
	})
}
