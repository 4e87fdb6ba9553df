package approvals

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// gnuSedProgram asks GNU sed how it parses script, without running it:
// --debug prints the parsed program, and with -n and no input no command
// runs. sed runs confined (as nobody, in its own namespaces), as w files
// are opened while parsing. ok is false when sed refuses the script.
func gnuSedProgram(t *testing.T, script string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hung process, not a wait
	defer cancel()
	cmd := exec.CommandContext(ctx, "sed", "--debug", "-n", "-e", script)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = "/", []string{"LC_ALL=C.UTF-8"}, confined()
	out, err := cmd.Output()
	if err != nil {
		return string(out), false
	}
	return string(out), true
}

// sedAddress is an address GNU sed's --debug prints before a command.
var sedAddress = regexp.MustCompile(`^(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\]|\\.)*/[IM]*)(?:,(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\]|\\.)*/[IM]*|[+~][0-9]+))?!? ?`)

// gnuSedRunsOrWrites reports the first command of a --debug program that
// runs a command or writes a file: e, w, W, or s with the e or w flag.
func gnuSedRunsOrWrites(program string) string {
	lines := strings.Split(program, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(lines[i], "  ") || line == "" {
			continue
		}
		cmd := sedAddress.ReplaceAllString(line, "")
		if cmd == "" {
			continue
		}
		switch c := cmd[0]; {
		case c == 'e' || c == 'w' || c == 'W':
			return line
		case c == 's' && len(cmd) > 1:
			if flags := sedFlags(cmd); strings.ContainsAny(flags, "ew") {
				return line
			}
		case c == 'a' || c == 'i' || c == 'c':
			for i+1 < len(lines) && lines[i+1] != "" { // the text, up to the blank line after it
				i++
			}
		}
	}
	return ""
}

// sedFlags returns the flags after s/re/repl/.
func sedFlags(cmd string) string {
	d, n := cmd[1], 0
	for j := 2; j < len(cmd); j++ {
		switch cmd[j] {
		case '\\':
			j++
		case d:
			if n++; n == 2 {
				return cmd[j+1:]
			}
		}
	}
	return ""
}

// TestSedScriptsReadAsGNUSedReadsThem: every sed script the policy
// allows is, as GNU sed itself parses it, free of e, w, W and s///e or w.
func TestSedScriptsReadAsGNUSedReadsThem(t *testing.T) {
	t.Parallel()
	scripts := []string{
		"s/a/b/", "s/a/b/g", "1,5p", "/x/d", "$!N;P;D", "s/x/y/e", "s/x/y/w /dev/null", "s/x/y/gw out", "e id", "1e id",
		"1a\\\nhello\\\ne id", "1a\\\nhello\ne id", "1a foo\\\ne id", "1a foo\ne id", "1i\\\n  e id", "1c\\\nx\ne id",
		"1a\\", "a\\\n\\\ne id", "a\\e id", "a e id", "$a\\\ntext\n1e id", "1{e id\n}", "1{\np\n}\ne id",
		"y/abc/xyz/;e id", "y/a\\/b/xyz/;e id", "s/a\\/b/c/;e id", "s|a|b|;e id", "s/[/]/x/;e id", "/[/]/e id",
		"\\%x%e id", "\\,x,e id", "1~2e id", "0~3w /dev/null", "1!e id", "1,/x/ e id", "/a/,+2 e id", "/a/I,~2e id",
		"b end;e id;:end", ":a;N;$!ba;s/\\n/ /g", "t x;e id", "T;e id", "l 5;e id", "q 5;e id", "Q;e id", "=;e id",
		"r /etc/hostname", "R /etc/hostname", "s/x/\\n/;e id", "s/x/y/3;e id", "s/x/y/mM;e id", "s/x/y/;W out",
		"F;z;e id", "s/a/b/ ; s/c/d/", "# comment\ne id", "#n\np", "s/a/b/#comment\ne id", "s/x/y/ # c\ne id",
		"v;e id", "v 4.2\ne id", "e", "s/./&/w\n", "{p};e id", "}e id", "1{;e id;}", "a\\\n   leading spaces\ne id",
	}
	compared := 0
	for _, s := range scripts {
		if sedUnsafe(s) != "" {
			continue // the policy asks for approval
		}
		compared++
		prog, ok := gnuSedProgram(t, s)
		if !ok {
			continue // GNU sed refuses the script: nothing runs
		}
		if bad := gnuSedRunsOrWrites(prog); bad != "" {
			t.Errorf("the policy allows sed %q, but GNU sed reads the command %q in it:\n%s", s, bad, prog)
		}
	}
	if compared < 10 {
		t.Errorf("only %d allowed scripts compared with GNU sed", compared)
	}
	t.Logf("%d scripts the policy allows compared with GNU sed's own parse", compared)
}
