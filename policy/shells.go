package policy

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellArgs is a shell's command line: its mode and its operands.
type shellArgs struct {
	cmode, stdin bool
	operands     []arg
	why          string // set when an option makes the shell run unseen code
}

// readShellArgs reads sh/bash/zsh options up to the first operand.
func readShellArgs(args []arg) shellArgs {
	var s shellArgs
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static() {
			if a.mayBeOption() && !s.cmode {
				s.why = fmt.Sprintf("shell options computed at run time (%s)", a.src)
			}
			break
		}
		v := a.val
		if v == "--" || v == "-" {
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			if name := v[2:]; strings.HasPrefix("rcfile", name) || strings.HasPrefix("init-file", name) {
				s.why = "the shell runs a start-up file the policy cannot see"
				i++
			}
			continue
		}
		if len(v) < 2 || (v[0] != '-' && v[0] != '+') {
			break
		}
		for _, f := range v[1:] {
			switch f {
			case 'c':
				s.cmode = true
			case 's':
				s.stdin = true
			case 'o', 'O':
				i++
			}
		}
	}
	if i < len(args) {
		s.operands = args[i:]
	}
	return s
}

// shell classifies a POSIX-family shell: a -c string or a here-document
// known now is parsed and classified like the outer command.
func (w *walker) shell(c *Command, args []arg, sc scope) {
	s := readShellArgs(args)
	if s.why != "" {
		c.add(Approve, s.why)
	}
	switch {
	case s.cmode && len(s.operands) == 0:
		c.add(Approve, "-c without a command string")
	case s.cmode && !s.operands[0].static():
		c.add(Approve, fmt.Sprintf("%s -c runs a string computed at run time (%s)", c.Program, s.operands[0].kindOr("a glob")))
	case s.cmode:
		c.add(Allow, "runs the -c string, classified on its own")
		w.wrapped(c, args, nil, sc)
		w.script(s.operands[0].val, sc.deeper(c.Program+" -c", shellDialects(c.Program)))
		return
	case len(s.operands) > 0 && !s.stdin:
		c.add(Approve, fmt.Sprintf("%s runs the script file %s, which the policy cannot read", c.Program, s.operands[0].show()))
	case sc.stdin == stdinText:
		c.add(Allow, "runs the here-document, classified on its own")
		if sc.sharedInput {
			c.add(Approve, "reads its program from input that other commands of the line read too, so which part it runs is not known now")
		}
		if scriptLines(sc.text) {
			c.add(Approve, "reads a program of several lines from its input, which the commands in it read too: one that reads its input takes the next lines, and the shell runs what follows")
		}
		w.wrapped(c, args, nil, sc)
		inner := sc.deeper(c.Program+" <<<", shellDialects(c.Program))
		// The commands of the program read the rest of it.
		inner.stdin, inner.text, inner.sharedInput = stdinFile, "", true
		w.script(sc.text, inner)
		return
	default:
		w.programFromStdin(c, sc)
	}
	w.record(*c)
}

// shellDialects are the dialects a shell named prog reads its program
// in: bash as bash, dash and its kin as POSIX, sh as either (dash on
// Debian and Ubuntu, bash on Red Hat). Other shells are foreign.
func shellDialects(prog string) []syntax.LangVariant {
	switch prog {
	case "bash":
		return bashOnly
	case "sh":
		return shEither
	}
	return posixOnly
}

// foreignShell is a shell whose language this classifier does not parse.
func (w *walker) foreignShell(c *Command, args []arg, sc scope) {
	if len(args) == 0 {
		w.programFromStdin(c, sc)
	} else {
		c.add(Approve, fmt.Sprintf("%s's language is not classified", c.Program))
	}
	w.record(*c)
}
