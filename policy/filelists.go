package policy

import (
	"fmt"
	"slices"
	"strings"
)

// fileOpt is an option whose value names a file the program reads: its
// lines come back as names in what the program prints or in its errors
// (du: cannot access 'root:$6$…'), so a secret file named there is read
// as surely as one given as an operand.
type fileOpt struct {
	short byte   // its letter, or 0
	long  string // its long name; getopt_long takes any unambiguous prefix
	// others are the program's long options the long name starts with:
	// those words are not abbreviations of it (du --exclude).
	others []string
	word   string // its name as one word after one dash (find -files0-from)
	// names says the program also reads what the files the list names
	// hold (sort --files0-from prints them).
	names bool
	// listOperands says the option takes no value but makes the operands
	// lists of names (tree --fromfile).
	listOperands bool
}

// fileOptions are the programs whose options name files they read.
// Programs that show what files hold have every word checked as a path
// (secretRead); these entries matter for programs whose operands are not
// read (metadataOnly, xargs) and for lists of further names.
var fileOptions = map[string][]fileOpt{
	"du":     {{long: "files0-from"}, {short: 'X', long: "exclude-from", others: []string{"exclude"}}},
	"find":   {{word: "-files0-from"}},
	"tree":   {{long: "fromfile", listOperands: true}, {long: "infofile"}, {long: "gitfile"}},
	"file":   {{short: 'f', long: "files-from"}, {short: 'm', long: "magic-file"}},
	"pgrep":  {{short: 'F', long: "pidfile"}},
	"whatis": {{short: 'C', long: "config-file"}},
	"xargs":  {{short: 'a', long: "arg-file"}},
	"sort":   {{long: "files0-from", names: true}},
	"wc":     {{long: "files0-from", names: true}},
}

// fileOptUse is one use of a file option: the option as written and the
// file it names.
type fileOptUse struct {
	opt  fileOpt
	as   string
	file arg
}

// fileOptionReads adds to c when an option names a secret file, or a list
// of names the program reads, which are known only when it runs.
func (w *walker) fileOptionReads(c *Command, args []arg) {
	for _, u := range fileOptUses(fileOptions[c.Program], args) {
		if e, unplaced := w.secretArg(u.file); e != "" {
			c.add(Approve, fmt.Sprintf("%s %s %s", c.Program, u.as, secretReadReason(u.file, e, unplaced)))
			return
		}
		if u.opt.names {
			c.add(Approve, fmt.Sprintf("%s %s %s reads the files %s names, known only when it runs, which could hold credentials",
				c.Program, u.as, u.file.show(), u.file.show()))
			return
		}
	}
}

// fileOptUses finds the file options in args, read generously, as no
// spec is needed for it: a long option by any prefix of its name, a short
// one anywhere in a bundle, a value attached or in the next word. Reading
// a word as a file that is none only checks one more path.
func fileOptUses(opts []fileOpt, args []arg) []fileOptUse {
	var uses []fileOptUse
	lists := false
	for i := 0; i < len(args); i++ {
		p := args[i].pattern()
		if p == "--" {
			break
		}
		for _, o := range opts {
			val, as, next := o.value(p)
			switch {
			case as == "":
				continue
			case o.listOperands:
				lists = true
				continue
			case next && i+1 < len(args):
				uses = append(uses, fileOptUse{o, as, args[i+1]})
			case !next:
				uses = append(uses, fileOptUse{o, as, attached(args[i], val)})
			}
		}
	}
	if lists {
		uses = append(uses, listOperands(opts, args)...)
	}
	return uses
}

// attached is the value val attached to the option word a, as a word of
// its own.
func attached(a arg, val string) arg {
	v := arg{src: val, val: val, pat: val}
	if hasWildcard(val) {
		v.src, v.dynamic = a.src, a.kindOr("a glob")
	}
	return v
}

// listOperands are the operands read as lists of names.
func listOperands(opts []fileOpt, args []arg) []fileOptUse {
	var o fileOpt
	for _, x := range opts {
		if x.listOperands {
			o = x
		}
	}
	var uses []fileOptUse
	for _, a := range args {
		if !strings.HasPrefix(a.pattern(), "-") || a.pattern() == "-" {
			uses = append(uses, fileOptUse{o, "--" + o.long, a})
		}
	}
	return uses
}

// value reads the option word p (a pattern) as this option: as is how it
// was written ("" when p is not this option), val an attached value, and
// next whether the value is the next word.
func (o fileOpt) value(p string) (val, as string, next bool) {
	switch {
	case o.word != "" && p == o.word:
		return "", o.word, true
	case strings.HasPrefix(p, "--") && o.long != "":
		name, val, eq := strings.Cut(p[2:], "=")
		if name == "" || !strings.HasPrefix(o.long, name) || hasWildcard(name) || slices.Contains(o.others, name) {
			return "", "", false
		}
		return val, "--" + o.long, !eq
	case strings.HasPrefix(p, "-") && !strings.HasPrefix(p, "--") && o.short != 0:
		i := strings.IndexByte(p[1:], o.short)
		if i < 0 || hasWildcard(p[1:i+1]) {
			return "", "", false
		}
		return p[i+2:], "-" + string(o.short), i+2 == len(p)
	}
	return "", "", false
}
