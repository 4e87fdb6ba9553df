package policy

import (
	"strings"
	"testing"
)

// shellCase is a command line and the action it must get.
type shellCase struct {
	line string
	want Action
}

// checkCases runs cases against the fleet policy on an SSH host, and
// returns the decisions by line.
func checkCases(t *testing.T, cases []shellCase) map[string]Decision {
	t.Helper()
	p := fleetPolicy(t)
	out := map[string]Decision{}
	for _, c := range cases {
		d := p.Check(Target{Host: "web-1"}, c.line)
		out[c.line] = d
		if d.Action != c.want {
			t.Errorf("%q: %s, want %s\n  %s", c.line, d.Action, c.want, strings.Join(d.Reasons, "\n  "))
		}
	}
	return out
}

// TestCommentEndsAtNewline: bash ends a comment at the newline even after
// a backslash, so the next line is a command of its own, classified as
// one (the parser alone would have joined it to the comment's command).
func TestCommentEndsAtNewline(t *testing.T) {
	t.Parallel()
	d := checkCases(t, []shellCase{
		{"uptime # \\\nrm -rf /srv/data", Approve},
		{"uptime # \\\nrm -rf --no-preserve-root /", Deny},
		{"df -h #\\\ntouch /tmp/x", Approve},
		{"uptime # one \\\n# two \\\nrm -rf /srv/data", Approve},
		{"echo $(uptime # \\\nrm -rf /srv/data)", Approve},
		{"bash -c 'uptime # \\\nrm -rf /srv/data'", Approve},
		{"uptime # \\\\\nuptime", Allow},
		{"uptime # note \\\ndf -h", Allow},
		{"# only a comment \\\nuptime", Allow},
	})
	if cmds := d["uptime # note \\\ndf -h"].Commands; len(cmds) != 2 || cmds[1].Program != "df" {
		t.Errorf("a comment ending in a backslash: commands %v, want uptime and df", cmds)
	}
}

// TestHeredocBodiesClassifiedAsTheirReader: a here-document or
// here-string is classified as what reads it: a shell's as its program,
// as the shell gets it after the outer shell's expansion; command
// substitutions in an unquoted body run in the outer shell.
func TestHeredocBodiesClassifiedAsTheirReader(t *testing.T) {
	t.Parallel()
	checkCases(t, []shellCase{
		{"bash <<EOF\necho \\`touch /tmp/x\\`\nEOF", Approve},
		{"bash <<EOF\necho \\$(touch /tmp/x)\nEOF", Approve},
		{"bash <<EOF\necho `touch /tmp/x`\nEOF", Approve},
		{"sh <<EOF\nrm -rf /srv/data\nEOF", Approve},
		{"bash <<-EOF\n\trm -rf /srv/data\n\tEOF", Approve},
		{"bash <<'EOF'\nrm -rf /srv/data\nEOF", Approve},
		{"bash <<< 'rm -rf /srv/data'", Approve},
		{"sh <<< \"touch /tmp/x\"", Approve},
		{"bash <<< 'rm -rf --no-preserve-root /'", Deny},
		{"python3 <<EOF\nimport os\nEOF", Approve},
		{"cat <<EOF\n$(touch /tmp/x)\nEOF", Approve},
		{"cat <<EOF\n`touch /tmp/x`\nEOF", Approve},
		// the shell reads its program a line at a time from the input its
		// commands read: `read x` would take the next line
		{"bash <<'EOF'\nread x\necho '\nrm -rf /srv/data\n'\nEOF", Approve},
		{"bash <<< 'uptime\nuptime'", Approve},
		{"{ read x; bash; } <<< 'uptime'", Approve},
		{"bash <<EOF\nuptime\nEOF", Allow},
		{"bash <<'EOF'\necho \\`uptime\\`\nEOF", Allow},
		{"bash <<< 'df -h'", Allow},
		{"cat <<'EOF'\n$(touch /tmp/x)\nEOF", Allow},
	})
}

// TestBackgroundChildrenNeedApproval: a child left running would
// outlive the command, whatever it runs.
func TestBackgroundChildrenNeedApproval(t *testing.T) {
	t.Parallel()
	d := checkCases(t, []shellCase{
		{"setsid sleep 300 &", Approve},
		{"setsid sleep 300", Approve},
		{"setsid -w uptime", Approve},
		{"nohup sleep 300", Approve},
		{"sleep 300 &", Approve},
		{"(sleep 300 &)", Approve},
		{"{ sleep 300 & }; uptime", Approve},
		{"echo $(sleep 300 &)", Approve},
		{"sleep 300 & disown", Approve},
		{"disown -a", Approve},
		{"coproc sleep 300", Approve},
		{"bash -c 'sleep 300 &'", Approve},
		{"sudo nohup uptime", Approve},
		{"sleep 300 && uptime", Allow},
	})
	for _, line := range []string{"sleep 300 &", "nohup sleep 300", "setsid sleep 300"} {
		if why := strings.Join(d[line].Reasons, " "); !strings.Contains(why, "outlive the command") {
			t.Errorf("%q: reasons %q do not say the child would outlive the command", line, why)
		}
	}
}

// TestOptionsAfterOperands: a getopt_long tool reads an option after an
// operand as an option (GNU permutation) until "--"; a tool whose
// options end at the first operand (xxd) reads it as an operand.
func TestOptionsAfterOperands(t *testing.T) {
	t.Parallel()
	checkCases(t, []shellCase{
		{"xxd /etc/hostname -s5", Approve},
		{"xxd /etc/hostname -c8", Approve},
		{"xxd /etc/hostname -- -s5", Approve},
		{"xxd -s5 /etc/hostname", Allow},
		{"xxd -- /etc/hostname", Allow},
		{"sort /etc/hostname -o /tmp/out", Approve},
		{"sort /etc/hostname --output=/tmp/out", Approve},
		{"sort /etc/hostname -r", Allow},
		{"ssh web-1 -o ProxyCommand='touch /tmp/x' uptime", Approve},
		{"ssh web-1 -L 8080:localhost:80 uptime", Approve},
	})
	spec := optSpec{short: "no:"}
	p := spec.parse([]arg{{val: "FILE"}, {val: "-o"}, {val: "OUT"}, {val: "--"}, {val: "-n"}})
	if o := p.findAll("o"); len(o) != 1 || o[0].value != "OUT" || len(p.operands) != 2 || p.operands[1].val != "-n" {
		t.Errorf("getopt_long permutation: opts %v operands %v, want -o OUT and operands FILE, -n", p.opts, p.operands)
	}
	spec.firstOperandEnds = true
	p = spec.parse([]arg{{val: "FILE"}, {val: "-o"}, {val: "OUT"}})
	if len(p.opts) != 0 || len(p.operands) != 3 {
		t.Errorf("options ending at the first operand: opts %v operands %v, want none and 3", p.opts, p.operands)
	}
}

// TestLoopVariableRedirection: a read redirection from a for loop's
// variable is judged by the loop's values when they are known now and
// nothing in the body can change it; otherwise it could be any file or
// bash's /dev/tcp.
func TestLoopVariableRedirection(t *testing.T) {
	t.Parallel()
	checkCases(t, []shellCase{
		{`for f in a b; do read x < "$f"; done`, Allow},
		{`for f in /etc/hostname /etc/os-release; do read -r x < $f; echo "$x"; done`, Allow},
		{`for f in a /dev/tcp/evil.example/80; do read x < "$f"; done`, Approve},
		{`for f in a /dev/udp/evil.example/53; do read x < "${f}"; done`, Approve},
		{`for f in /etc/shadow; do read x < "$f"; done`, Approve},
		{`for f in a b; do read f; read x < "$f"; done`, Approve},
		{`for f in a b; do read -r f; read x < "$f"; done`, Approve},
		{`for f in a b; do printf -v f x; read x < "$f"; done`, Approve},
		{`for f in a b; do f=/dev/tcp/evil.example/80; read x < "$f"; done`, Approve},
		{`for f in a b; do read x < "${f:=/dev/tcp/evil.example/80}"; done`, Approve},
		{`for f in a b; do for f in /dev/tcp/evil.example/80; do :; done; read x < "$f"; done`, Approve},
		{`for f in $(ls); do read x < "$f"; done`, Approve},
		{`for f; do read x < "$f"; done`, Approve},
		{`for f in a b; do :; done; read x < "$f"`, Approve},
	})
}

// TestBashReadingConfirmsAllow: an allowed line is confirmed with bash's
// own reading; without bash it needs approval.
func TestBashReadingConfirmsAllow(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	if d := p.Check(Target{Host: "web-1"}, "uptime"); d.Action != Allow {
		t.Fatalf("uptime: %s, want allow: %v", d.Action, d.Reasons)
	}
	// Backquotes: the parser ends the comment at the backquote, bash
	// does not (the backquoted text is a string first).
	if d := p.Check(Target{Host: "web-1"}, "echo `echo # \\\nuptime`"); d.Action != Approve || !strings.Contains(strings.Join(d.Reasons, " "), "bash reads the command differently") {
		t.Errorf("a line bash reads otherwise: %s %v, want approve because bash reads it differently", d.Action, d.Reasons)
	}
	noBash := *p
	noBash.bash = &bashReader{seen: map[string]bashParse{}}
	d := noBash.Check(Target{Host: "web-1"}, "uptime")
	if d.Action != Approve || !strings.Contains(strings.Join(d.Reasons, " "), "bash is not installed") {
		t.Errorf("without bash: %s %v, want approve saying bash is not installed", d.Action, d.Reasons)
	}
}

// TestBashProbeRunsNothing: the probe asking bash for its reading runs
// nothing of the line, even when the line closes the function's braces
// early or hides commands in words and redirections of compound
// commands: what would run prints a mark, which never shows up.
func TestBashProbeRunsNothing(t *testing.T) {
	t.Parallel()
	const mark = "OPSBOT_PROBE_RAN"
	r := newBashReader()
	for _, line := range []string{
		"}\nprintf " + mark + "\nf() {\n:",
		"}\n{ :; } < <(printf " + mark + ")\nf() {\n:",
		"}\ncase $(printf " + mark + " >&2) in x) ;; esac\nf() {\n:",
		"}\nfor i in $(printf " + mark + " >&2); do :; done\nf() {\n:",
		"}\ndeclare() { printf " + mark + "; }\nf() {\n:",
		"}\n(printf " + mark + ")\nf() {\n:",
		"}\nshopt -u extdebug; trap - DEBUG; printf " + mark + "\nf() {\n:",
		"}\n{ :; } <<E\n$(printf " + mark + " >&2)\nE\nf() {\n:",
	} {
		out, stderr, why := r.probe(line, probeEnd())
		if why != "" {
			t.Fatalf("%q: %s", line, why)
		}
		if strings.Contains(out+stderr, mark) {
			t.Errorf("the bash probe ran part of %q:\n%s%s", line, out, stderr)
		}
		if got := r.read(line); got.ok {
			t.Errorf("%q escapes the function, yet bash's reading was taken: %q", line, got.body)
		}
	}
	if got := r.read("uptime # \\\ndf -h"); !got.ok || strings.Fields(got.body)[1] != "df" {
		t.Errorf("bash's reading of a comment ending in a backslash: %+v", got)
	}
}

// TestShellBypassCorpus: the attempts of testdata/bypass_shell.txt are
// each approve or deny.
func TestShellBypassCorpus(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	lines := readCorpus(t, "testdata/bypass_shell.txt")
	for _, line := range lines {
		if d := p.Check(Target{Host: "web-1"}, line); d.Action == Allow {
			t.Errorf("allowed: %q\n  %s", line, strings.Join(d.Reasons, "\n  "))
		}
	}
	t.Logf("%d shell bypass attempts, none allowed", len(lines))
}

// TestShellHarmlessCorpus: the everyday lines of
// testdata/harmless_shell.txt near the classes above stay allowed.
func TestShellHarmlessCorpus(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	for _, line := range readCorpus(t, "testdata/harmless_shell.txt") {
		if d := p.Check(Target{Host: "web-1"}, line); d.Action != Allow {
			t.Errorf("%q: %s, want allow\n  %s", line, d.Action, strings.Join(d.Reasons, "\n  "))
		}
	}
}
