package approvals

import (
	"fmt"
	"slices"
	"strings"
)

// optSpec describes a program's command-line options in the GNU style:
// bundled short options (-rno FILE), long options with "=" or a separate
// value, and unambiguous abbreviations of long options (--out for
// --output).
type optSpec struct {
	// shortArg lists the short options that take a value.
	shortArg string
	// longArg lists the long options that take a value.
	longArg []string
	// stopAtOperand ends option parsing at the first operand, as for
	// wrappers, whose operands are the command they run.
	stopAtOperand bool
}

// opt is one option found on a command line.
type opt struct {
	name  string // a letter for a short option, the name after "--" for a long one
	long  bool
	value string
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts     []opt
	operands []arg
	// rest holds the words after the first operand when stopAtOperand.
	rest []arg
	// unknown says why some word could not be read now: a variable,
	// substitution or glob that could stand for an option.
	unknown string
}

// parse reads args (without the program name). A value taken by an
// option that itself looks like an option is also read as an option, so
// a wrong guess about which options take values errs on the strict side.
func (s optSpec) parse(args []arg) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.mayBeOption() && !a.static():
			p.unknown = fmt.Sprintf("the argument %s is computed at run time (%s)", a.src, a.kindOr("a glob"))
		case !a.static() || a.val == "-" || !strings.HasPrefix(a.val, "-"):
			if s.stopAtOperand {
				p.rest = args[i:]
				return p
			}
			p.operands = append(p.operands, a)
		case a.val == "--":
			p.operands = append(p.operands, args[i+1:]...)
			p.noteUnknown(args[i+1:])
			if s.stopAtOperand {
				p.rest, p.operands = p.operands, nil
			}
			return p
		case strings.HasPrefix(a.val, "--"):
			i = s.long(&p, args, i)
		default:
			i = s.short(&p, args, i)
		}
	}
	return p
}

func (p *parsed) noteUnknown(args []arg) {
	for _, a := range args {
		if !a.static() && p.unknown == "" {
			p.unknown = fmt.Sprintf("the argument %s is computed at run time (%s)", a.src, a.kindOr("a glob"))
		}
	}
}

func (a arg) kindOr(s string) string {
	if a.dynamic != "" {
		return a.dynamic
	}
	return s
}

// long reads --name, --name=value or --name value at args[i].
func (s optSpec) long(p *parsed, args []arg, i int) int {
	name, value, eq := strings.Cut(args[i].val[2:], "=")
	o := opt{name: name, long: true, value: value}
	if !eq && s.takesLong(name) && i+1 < len(args) {
		i++
		o.value = s.value(p, args[i])
	}
	p.opts = append(p.opts, o)
	return i
}

// short reads a bundle of short options at args[i].
func (s optSpec) short(p *parsed, args []arg, i int) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		o := opt{name: v[j : j+1]}
		if strings.IndexByte(s.shortArg, v[j]) >= 0 {
			o.value = v[j+1:]
			if o.value == "" && i+1 < len(args) {
				i++
				o.value = s.value(p, args[i])
			}
			p.opts = append(p.opts, o)
			return i
		}
		p.opts = append(p.opts, o)
	}
	return i
}

// value takes a word as an option's value; one that looks like an option
// is read as an option too.
func (s optSpec) value(p *parsed, a arg) string {
	if !a.static() {
		p.noteUnknown([]arg{a})
		return a.src
	}
	if strings.HasPrefix(a.val, "-") && len(a.val) > 1 {
		inner := optSpec{shortArg: s.shortArg, longArg: s.longArg}.parse([]arg{a})
		p.opts = append(p.opts, inner.opts...)
	}
	return a.val
}

// takesLong reports whether a long option, possibly abbreviated, takes a
// value.
func (s optSpec) takesLong(name string) bool {
	return slices.ContainsFunc(s.longArg, func(full string) bool { return name != "" && strings.HasPrefix(full, name) })
}

// has reports whether any of the options is present: a single letter
// names a short option, a longer name a long option, which matches any
// abbreviation of it (GNU getopt_long accepts --out for --output).
func (p parsed) has(names ...string) bool {
	return p.find(names...) != nil
}

// find returns the first option present among names.
func (p parsed) find(names ...string) *opt {
	for i, o := range p.opts {
		for _, n := range names {
			if matchOpt(o, n) {
				return &p.opts[i]
			}
		}
	}
	return nil
}

func matchOpt(o opt, n string) bool {
	if len(n) == 1 {
		return !o.long && o.name == n
	}
	return o.long && o.name != "" && strings.HasPrefix(n, o.name)
}

// onlyOpts reports whether every option present is in the allowed set.
func (p parsed) onlyOpts(allowed ...string) (string, bool) {
	for _, o := range p.opts {
		if !slices.ContainsFunc(allowed, func(n string) bool { return matchOpt(o, n) }) {
			return o.String(), false
		}
	}
	return "", true
}

// String is the option as written on a command line.
func (o opt) String() string {
	if o.long {
		return "--" + o.name
	}
	return "-" + o.name
}
