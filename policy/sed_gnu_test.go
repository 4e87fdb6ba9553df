package policy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// gnuSed asks GNU sed how it parses the scripts (one -e each), without
// running them: --debug prints the parsed program, and with -n and no
// input no command runs. sed runs confined (as nobody, in its own
// namespaces, in /), as w files are opened while parsing. ok is false
// when sed refuses the program; then out is what it said.
func gnuSed(t *testing.T, scripts ...string) (out string, ok bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hung process, not a wait
	defer cancel()
	argv := []string{"--debug", "-n"}
	for _, s := range scripts {
		argv = append(argv, "-e", s)
	}
	cmd := exec.CommandContext(ctx, "sed", argv...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = "/", []string{"LC_ALL=C.UTF-8"}, confined()
	b, err := cmd.CombinedOutput()
	return string(b), err == nil
}

// sedAddress is an address GNU sed's --debug prints before a command.
var sedAddress = regexp.MustCompile(`^(?:(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\[]|\\.|\[[^]]*\])*/[IM]*)(?:,(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\[]|\\.|\[[^]]*\])*/[IM]*|[+~][0-9]+|\[ADDR-NULL\]))?)?!? ?`)

// gnuSedCommands reads a --debug program back into commands: the letter,
// the file of r, R, w, W and s///w, the label of :, and s's e and w
// flags; the text of a, i, c and e runs to the blank line after it.
func gnuSedCommands(program string) []sedCommand {
	lines := strings.Split(strings.TrimPrefix(program, "SED PROGRAM:\n"), "\n")
	var cmds []sedCommand
	for i := 0; i < len(lines); i++ {
		line := sedAddress.ReplaceAllString(strings.TrimLeft(lines[i], " "), "")
		if line == "" {
			continue
		}
		c := sedCommand{name: line[0]}
		rest := line[1:]
		switch c.name {
		case 'r', 'R':
			c.file = strings.TrimPrefix(rest, " ")
		case 'w', 'W':
			c.file = rest
		case ':':
			c.label = rest
		case 's':
			flags, ok := sedFlags(line)
			for ; !ok && i+1 < len(lines); flags, ok = sedFlags(line) { // a replacement with an escaped newline
				i++
				line += "\n" + lines[i]
			}
			c.eval = strings.ContainsRune(strings.Split(flags, "w")[0], 'e')
			if j := strings.IndexByte(flags, 'w'); j >= 0 {
				c.write, c.file = true, flags[j+1:]
			}
		case 'a', 'i', 'c', 'e':
			if text := strings.TrimPrefix(strings.TrimPrefix(rest, "\\"), " "); text != "" || i+1 < len(lines) && lines[i+1] == "" {
				for i+1 < len(lines) && lines[i+1] != "" { // the text, up to the blank line after it
					i++
				}
				i++
			}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// sedFlags returns the flags after s/re/repl/, and whether cmd has them.
func sedFlags(cmd string) (string, bool) {
	d, n := cmd[1], 0
	for j := 2; j < len(cmd); j++ {
		switch cmd[j] {
		case '\\':
			j++
		case d:
			if n++; n == 2 {
				return cmd[j+1:], true
			}
		}
	}
	return "", false
}

// sedSummary is the commands as compared: letter, file, label, flags.
func sedSummary(cmds []sedCommand) string {
	var b strings.Builder
	for _, c := range cmds {
		fmt.Fprintf(&b, "%c", c.name)
		if c.label != "" && c.name == ':' {
			fmt.Fprintf(&b, ":%q", c.label)
		}
		if c.file != "" || c.write {
			fmt.Fprintf(&b, "[%q]", c.file)
		}
		if c.eval {
			b.WriteString("E")
		}
		b.WriteString(" ")
	}
	return b.String()
}

// sedFragments are the pieces the generated scripts are made of: the
// commands whose arguments end in different places (labels, file names,
// texts), addresses, and what separates commands.
var (
	sedFragments = []string{"p", "e id", "e", "tx", "t x", "bx", "b", "T", "b x;", ":x", ": x", ":x;", "w /dev/null", "W /dev/null",
		"r in", "R in", "rin", "s/a/b/", "s/a/b/w /dev/null", "s/a/b/e", "s/a/b/gp", "s|a|b|3", "s/[/]/x/", "s/a\\/b/c/", "a foo",
		"a\\", "a\\\nfoo", "i\\", "c bar\\", "y/ab/cd/", "q", "q5", "Q 3", "l", "l 4", "F", "z", "=", "{", "}", "#c", "v", "1", "/x/",
		"$!", "0,/r/", "1~2", "/x/,+3", "/x/,~2", "\\%x%I", "!", "x#", "x}", "N", "e\\", "s/x/\\\n/"}
	sedSeparators = []string{"", " ", ";", "\n", "\t", " ; ", "}", "\\\n", "#"}
)

// generatedSedScripts are n scripts of two to four fragments, some split
// into two -e scripts, from a fixed seed.
func generatedSedScripts(n int) [][]string {
	r := rand.New(rand.NewPCG(24, 8))
	var out [][]string
	for range n {
		var b strings.Builder
		for k := 2 + r.IntN(3); k > 0; k-- {
			b.WriteString(sedFragments[r.IntN(len(sedFragments))])
			if k > 1 {
				b.WriteString(sedSeparators[r.IntN(len(sedSeparators))])
			}
		}
		s := b.String()
		if cut := r.IntN(len(s) + 1); r.IntN(3) == 0 {
			out = append(out, []string{s[:cut], s[cut:]})
		} else {
			out = append(out, []string{s})
		}
	}
	return out
}

// TestSedParsesAsGNUSed: for hand-written and generated scripts, the
// policy's parser reads the same commands as GNU sed (--debug), with the
// same files, labels and s flags, and refuses only what GNU refuses, so
// a label, a file name or a text ends where GNU ends it.
func TestSedParsesAsGNUSed(t *testing.T) {
	t.Parallel()
	cases := append(generatedSedScripts(700), [][]string{
		{"tx e id", ":x"}, {":a e id"}, {"tx w /dev/null\n:x"}, {"b end;e id;:end"}, {":a;N;$!ba;s/\\n/ /g"}, {"/x/,+3p"}, {"0,/re/p"},
		{"1a\\", "e id"}, {"e\\", "id"}, {"a foo\\", "e id"}, {"1{", "e id", "}"}, {"s/x/y/ # c\ne id"}, {"v 4.2\ne id"}, {"s/./&/w\n"},
		{"t x\fe id\n:x"}, {"t x\ve id\n:x"}, {"bx}e id\n:x"}, {"bx#e id\n:x"}, {"l5e id"}, {"q 5 e id"}, {"s/a/b/ e"}, {"s/a/b/\r\ne id"},
		{"y/a\\/b/xyz/;e id"}, {"/[/]/e id"}, {"s/[[:alpha:]/]/x/;e id"}, {"s/[[.-.]/]/x/;e id"}, {"s/[]/]/x/;e id"}, {"s/[^]/]/x/;e id"},
		{"0r in"}, {"0~0p"}, {"+3p"}, {"1,+0e id"}, {"$!{e id\n}"}, {"1!!p"}, {"1 ! e id"}, {"s/a/b/3p;e id"}, {"r\n"}, {"w"}, {"F;z;e id"},
	}...)
	var same, refusedBoth, gnuOnly int
	for _, scripts := range cases {
		ours, why := parseSedScripts(scripts, false)
		out, ok := gnuSed(t, scripts...)
		switch {
		case !ok && why != "":
			refusedBoth++
		case !ok:
			// GNU refuses after the parse: a jump to a missing label, or a
			// w file it may not open here.
			if !strings.Contains(out, "can't find label") && !strings.Contains(out, "couldn't open file") {
				t.Errorf("GNU sed refuses %q (%s), the policy reads %s", scripts, strings.TrimSpace(out), sedSummary(ours))
			}
			gnuOnly++
		case why != "":
			if !strings.Contains(why, "`y'") {
				t.Errorf("the policy refuses %q (%s), GNU sed reads it:\n%s", scripts, why, out)
			}
		default:
			if got, want := sedSummary(ours), sedSummary(gnuSedCommands(out)); got != want {
				t.Errorf("sed %q: the policy reads %s, GNU sed reads %s\n%s", scripts, got, want, out)
			}
			same++
		}
	}
	if same < 200 || refusedBoth < 50 {
		t.Errorf("only %d programs compared and %d refused by both", same, refusedBoth)
	}
	t.Logf("%d programs read alike, %d refused by both, %d refused by GNU sed after its parse", same, refusedBoth, gnuOnly)
}

// TestSedAllowsOnlyWhatGNUSedReadsAsHarmless: every sed command line the
// policy allows is, as GNU sed itself parses it, free of e, w, W and s
// with the e or w flag (bar the standard output), and its r and R files
// are words the secret-path check sees.
func TestSedAllowsOnlyWhatGNUSedReadsAsHarmless(t *testing.T) {
	t.Parallel()
	compared := 0
	for _, scripts := range generatedSedScripts(700) {
		var args []arg
		for _, s := range scripts {
			args = append(args, arg{src: "-e", val: "-e"}, arg{src: s, val: s})
		}
		if a, _ := checkSed(args); a != Allow {
			continue
		}
		out, ok := gnuSed(t, scripts...)
		if !ok {
			continue // GNU sed refuses the script: nothing runs
		}
		compared++
		for _, c := range gnuSedCommands(out) {
			if c.name == 'e' || c.eval || (c.write || c.name == 'w' || c.name == 'W') && !slices.Contains(sedStdio, c.file) {
				t.Errorf("the policy allows sed %q, but GNU sed reads a command that runs or writes:\n%s", scripts, out)
			}
		}
	}
	if compared < 100 {
		t.Errorf("only %d allowed programs compared with GNU sed", compared)
	}
	t.Logf("%d programs the policy allows compared with GNU sed's own parse", compared)
}
