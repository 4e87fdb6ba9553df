package policy

import (
	"fmt"
	"strings"
)

// awkReadOnlyOpts are the awk options (gawk's and mawk's) that neither
// load program text nor write a file: -f/-E/--file, -e/--source,
// -i/--include, -l/--load, -W exec and the like read a program the policy
// cannot see, and gawk -d/-p/-o write files (gawk -d/etc/passwd).
var awkReadOnlyOpts = []string{"F", "v", "field-separator", "assign", "b", "characters-as-bytes", "c", "traditional", "C", "copyright",
	"h", "help", "n", "non-decimal-data", "N", "use-lc-numeric", "M", "bignum", "O", "optimize", "s", "no-optimize", "P", "posix",
	"r", "re-interval", "S", "sandbox", "t", "lint-old", "V", "version", "csv", "k"}

// checkAwk allows an awk program known now that cannot run commands or
// write files: no system(), no pipes, no print redirection, no gawk
// extensions loading code, and no option that loads or writes files.
func checkAwk(args []arg) (Action, string) {
	p := awkSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	for _, o := range p.opts {
		// mawk's -W takes the long option as its value (-W version); any
		// other -W (exec, e, sprintf, …) is refused.
		if o.name == "W" && (o.value == "version" || o.value == "v") {
			continue
		}
		if _, ok := p.onlyOpts(awkReadOnlyOpts...); !ok || o.name == "W" {
			return Approve, fmt.Sprintf("awk %s loads program text the policy cannot read or writes a file", o)
		}
	}
	if p.has("W") {
		return Allow, "prints its version"
	}
	if len(p.operands) == 0 || !p.operands[0].static() {
		return Approve, "awk without a program known now"
	}
	if why := awkUnsafe(p.operands[0].val, args); why != "" {
		return Approve, why
	}
	// gawk opens /inet/tcp/… and /inet/udp/… as network connections, in
	// a getline redirection as well as named as an input file.
	for _, a := range args {
		if strings.Contains(a.val, "/inet") {
			return Approve, "gawk reads /inet/… special files as network connections"
		}
	}
	return Allow, "the awk program only reads and prints"
}

// awkUnsafe reads an awk program with awkLexer and awkParser and
// returns why it needs approval, or "" when it parses completely under
// the small grammar they accept: patterns, print and printf to standard
// output, arithmetic, string functions, control flow, getline from a
// file named by a constant that args show where the secret-path check
// sees it. No system(), no redirection, no pipes, no user functions, no
// @include or @load, and none of the arrays that dump the environment or
// name the files awk reads.
func awkUnsafe(prog string, args []arg) string {
	toks, why := awkLex(prog)
	if why != "" {
		return why
	}
	for _, t := range toks {
		if why := awkSpecialArrays[t.text]; why != "" && (t.kind == 'n' || t.kind == 'f') {
			return "awk " + t.text + " " + why
		}
	}
	ps := &awkParser{toks: toks}
	if err := ps.program(); err != "" {
		return err
	}
	for _, f := range ps.files {
		if !namedAlone(f, args) {
			return fmt.Sprintf("awk getline reads %q, a file the policy cannot check for credentials", f)
		}
	}
	return ""
}

// awkSpecialArrays are the variables that dump the environment or the
// process, reach any variable or function by a computed name, or change
// which files awk reads.
var awkSpecialArrays = map[string]string{
	"ENVIRON":  "holds the whole environment, which holds credentials",
	"PROCINFO": "(gawk) exposes the process and changes how I/O works",
	"SYMTAB":   "(gawk) reaches any variable by a computed name, ENVIRON among them",
	"FUNCTAB":  "(gawk) reaches any function by a computed name",
	"ARGV":     "names the files awk reads, which the program may change to any file",
}
