package policy

import (
	"fmt"
	"slices"
	"strings"
)

// checkSed allows sed that only prints: no -i, no script file, and a
// script made of commands that neither write files nor run programs, read
// with GNU sed's own grammar (sedParser); the files r and R read are
// named where the secret-path check sees them.
func checkSed(args []arg) (Action, string) {
	p := sedSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("i", "in-place"); o != nil {
		return Approve, fmt.Sprintf("sed %s edits files in place", o)
	}
	if o := p.find("f", "file"); o != nil {
		return Approve, "sed -f runs a script file the policy cannot read"
	}
	var scripts []string
	for _, o := range p.findAll("e", "expression") {
		scripts = append(scripts, o.value)
	}
	if len(scripts) == 0 {
		if p.has("help", "version") {
			return Allow, "prints its help or version"
		}
		if len(p.operands) == 0 || !p.operands[0].static() {
			return Approve, "sed without a script known now"
		}
		scripts = append(scripts, p.operands[0].val)
	}
	prog, why := parseSed(scripts, p.has("posix"))
	if why != "" {
		return Approve, "GNU sed would not read the script (" + why + "), and may have opened its w files by then"
	}
	for _, c := range prog.cmds {
		if why := sedRunsOrWrites(c, args); why != "" {
			return Approve, why
		}
	}
	// GNU sed, and POSIX, go on with an a, i or c text after a backslash
	// at the end of a line or of an -e; a sed that ended the text there
	// (another implementation or version on the host) would read the
	// next line as commands, so those lines must be harmless as commands.
	for _, line := range prog.continued {
		if more, why := parseSedScripts([]string{line}, false); why == "" {
			for _, c := range more {
				if why := sedRunsOrWrites(c, args); why != "" {
					return Approve, "a sed that ends the a, i or c text at the line's end would read the next line as commands: " + why
				}
			}
		}
	}
	return Allow, "sed only prints"
}

// sedStdio are the w files GNU sed writes to its own output, not a file.
var sedStdio = []string{"/dev/stdout", "/dev/stderr"}

// sedRunsOrWrites says why a command runs a program, writes a file, or
// reads a file named where the secret-path check cannot see it; else "".
func sedRunsOrWrites(c sedCommand, args []arg) string {
	switch {
	case c.name == 'e':
		return "sed e runs a command"
	case c.eval:
		return "sed s///e runs the result as a command"
	case (c.write || c.name == 'w' || c.name == 'W') && !slices.Contains(sedStdio, c.file):
		return fmt.Sprintf("sed %c writes the file %q", c.name, c.file)
	case (c.name == 'r' || c.name == 'R') && !namedAlone(c.file, args):
		return fmt.Sprintf("sed %c reads %q, a file the policy cannot check for credentials", c.name, c.file)
	}
	return ""
}

// namedAlone reports whether name stands as a path of its own in one of
// the words, where secretRead checks it (the words' path candidates);
// `rshadow` reads shadow, which no candidate names.
func namedAlone(name string, args []arg) bool {
	for _, a := range args {
		if a.static() && slices.Contains(pathCandidates(a.val), name) {
			return true
		}
	}
	return strings.TrimSpace(name) == "" && name != ""
}
