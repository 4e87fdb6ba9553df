package policy

import (
	"fmt"
	"slices"
	"strings"
)

// optFamily is the option parser a tool is built with. Each family is
// written once, after the parser's own rules, because how a word is read
// decides which word is the subcommand, the file or the program:
// `systemctl --reboot-argument status restart nginx` restarts nginx, as
// --reboot-argument takes "status" as its value.
type optFamily int

const (
	// getoptLong is GNU getopt_long: bundled short options (-rno FILE), a
	// value attached or in the next word, optional values only attached
	// (-e, -eEOF; --opt=value), long options abbreviated to any unique
	// prefix (--out for --output), options and operands mixed unless the
	// spec stops at the first operand.
	getoptLong optFamily = iota
	// pflag is spf13/pflag under cobra (kubectl, docker, helm): --name
	// value, --name=value, -n value, -nvalue, -n=value; no abbreviations;
	// boolean flags take a value only after "=".
	pflag
	// openssl is OpenSSL's opt_next: single-dash long names, also written
	// --name, a value in the next word or after "=" (-out=FILE), exact
	// names only, options end at the first operand.
	openssl
	// ipStyle is iproute2's matches(): -name or --name abbreviated to any
	// prefix, the first option in the tool's own order that the word is a
	// prefix of wins (ip -b is -batch); options end at the first operand.
	ipStyle
	// wholeWord is a hand-written loop comparing each word with the
	// option names as written, dashes included (redis-cli): no bundles,
	// no abbreviations, no "=" forms; options end at the first operand.
	wholeWord
)

// optSpec is every option a tool accepts, in its parser's family. An
// option not in the spec is not guessed at: the command needs approval.
type optSpec struct {
	family optFamily
	// short is a getopt option string: "x" takes no value, "x:" a value,
	// "x::" an optional value that can only be attached (-xVALUE).
	short string
	// long lists the long options: "name" takes no value, "name=" a
	// value, "name=?" an optional value given only as --name=value. For
	// openssl and ipStyle they are the single-dash names, and for ipStyle
	// their order is the tool's.
	long []string
	// stopAtOperand ends option parsing at the first operand, as for
	// wrappers, whose operands are the command they run.
	stopAtOperand bool
	// firstOperandEnds ends the options at the first operand, for a
	// getopt-like parser that does not permute (a hand-written loop, as
	// xxd's, or an option string starting with "+"): the words after it
	// are operands even when they start with "-" (`xxd FILE -s5` writes a
	// file named -s5). GNU getopt_long and pflag permute: an option after
	// an operand is still an option, and only "--" ends them.
	firstOperandEnds bool
	// exact turns off getopt_long's abbreviations (git's own options).
	exact bool
	// lenient reads an option the spec does not list as a flag without a
	// value, known by the name as written; find then matches it as an
	// abbreviation of any longer name. Only for finding dangerous options
	// (the deny rules, git's read-only subcommands with their hundreds of
	// log and diff options), never to decide which word is a subcommand.
	lenient bool
}

// valueKind is whether an option takes a value.
type valueKind int

const (
	noValue valueKind = iota
	needsValue
	optionalValue // attached only
)

// opt is one option found on a command line, named as the spec names it
// (an abbreviation is resolved to the full name).
type opt struct {
	name  string // a letter for a short option, the full name of a long one
	long  bool
	value string
	// guessed marks an option a lenient spec does not know: its name is
	// as written, possibly an abbreviation.
	guessed bool
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts     []opt
	operands []arg
	// rest holds the words after the first operand when stopAtOperand.
	rest []arg
	// unknown says why the line could not be read exactly: an option the
	// spec does not know, a value missing, or a word computed at run time
	// that could stand for an option. Callers approve when it is set.
	unknown string
}

// parse reads args (without the program name) in the spec's family.
func (s optSpec) parse(args []arg) parsed {
	var p parsed
	for i := 0; i < len(args) && (p.unknown == "" || s.lenient); i++ {
		a := args[i]
		switch {
		case a.mayBeOption() && !a.static():
			p.unknown = fmt.Sprintf("the argument %s is computed at run time (%s)", a.src, a.kindOr("a glob"))
		case !a.static() || a.val == "-" || !strings.HasPrefix(a.val, "-"):
			if s.stopAtOperand {
				p.rest = args[i:]
				return p
			}
			if s.firstOperandEnds || s.family == openssl || s.family == ipStyle || s.family == wholeWord {
				p.operands = append(p.operands, args[i:]...)
				p.noteUnknown(args[i+1:])
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
		default:
			i = s.option(&p, args, i)
		}
	}
	return p
}

// parseWrapper parses a wrapper's options strictly; when that stops at
// an option the spec does not know, the command after it is still found,
// reading unknown options as flags, so that what the wrapper runs is
// classified too (a deny inside stays a deny). p.unknown stays set.
func (s optSpec) parseWrapper(args []arg) parsed {
	p := s.parse(args)
	if p.unknown != "" && s.stopAtOperand {
		guess := s
		guess.lenient = true
		p.rest = guess.parse(args).rest
	}
	return p
}

// option reads the option word at args[i] and returns the index of the
// last word it used.
func (s optSpec) option(p *parsed, args []arg, i int) int {
	v := args[i].val
	switch s.family {
	case openssl:
		return s.opensslOpt(p, args, i)
	case ipStyle:
		return s.ipOpt(p, args, i)
	case wholeWord:
		return s.wholeWordOpt(p, args, i)
	}
	if strings.HasPrefix(v, "--") {
		return s.longOpt(p, args, i)
	}
	return s.shortOpts(p, args, i)
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

// lookupLong finds a long option: the exact name, or for getopt_long
// the one option the name is a prefix of.
func (s optSpec) lookupLong(name string) (full string, kind valueKind, why string) {
	var hits []string
	for _, l := range s.long {
		n, k := splitLong(l)
		if n == name {
			return n, k, ""
		}
		if s.family == getoptLong && !s.exact && name != "" && strings.HasPrefix(n, name) {
			hits = append(hits, l)
		}
	}
	switch len(hits) {
	case 0:
		return "", 0, "is not an option the policy knows for this program"
	case 1:
		n, k := splitLong(hits[0])
		return n, k, ""
	}
	return "", 0, "is an ambiguous abbreviation"
}

func splitLong(l string) (string, valueKind) {
	if n, ok := strings.CutSuffix(l, "=?"); ok {
		return n, optionalValue
	}
	if n, ok := strings.CutSuffix(l, "="); ok {
		return n, needsValue
	}
	return l, noValue
}

// longOpt reads --name, --name=value or --name value.
func (s optSpec) longOpt(p *parsed, args []arg, i int) int {
	name, value, eq := strings.Cut(args[i].val[2:], "=")
	full, kind, why := s.lookupLong(name)
	switch {
	case why != "" && s.lenient:
		p.opts = append(p.opts, opt{name: name, long: true, value: value, guessed: true})
		return i
	case why != "":
		p.unknown = fmt.Sprintf("--%s %s", name, why)
		return i
	case eq && kind == noValue && s.family != pflag:
		p.unknown = fmt.Sprintf("--%s takes no value", full)
		return i
	case !eq && kind == needsValue:
		if i+1 >= len(args) {
			p.unknown = fmt.Sprintf("--%s needs a value", full)
			return i
		}
		i++
		value = p.valueWord(args[i])
	}
	p.opts = append(p.opts, opt{name: full, long: true, value: value})
	return i
}

// shortKind is how the spec's short option c takes a value; ok is false
// for a letter the spec does not know.
func (s optSpec) shortKind(c byte) (valueKind, bool) {
	i := strings.IndexByte(s.short, c)
	if i < 0 || c == ':' {
		return 0, false
	}
	switch {
	case strings.HasPrefix(s.short[i+1:], "::"):
		return optionalValue, true
	case strings.HasPrefix(s.short[i+1:], ":"):
		return needsValue, true
	}
	return noValue, true
}

// shortOpts reads a bundle of short options at args[i].
func (s optSpec) shortOpts(p *parsed, args []arg, i int) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		kind, ok := s.shortKind(v[j])
		if !ok && s.lenient {
			p.opts = append(p.opts, opt{name: v[j : j+1], guessed: true})
			continue
		}
		if !ok {
			p.unknown = fmt.Sprintf("-%c is not an option the policy knows for this program", v[j])
			return i
		}
		o := opt{name: v[j : j+1]}
		if kind == noValue {
			p.opts = append(p.opts, o)
			continue
		}
		o.value = v[j+1:]
		if s.family == pflag {
			o.value = strings.TrimPrefix(o.value, "=")
		}
		if o.value == "" && kind == needsValue {
			if i+1 >= len(args) {
				p.unknown = fmt.Sprintf("-%s needs a value", o.name)
				return i
			}
			i++
			o.value = p.valueWord(args[i])
		}
		p.opts = append(p.opts, o)
		return i
	}
	return i
}

// opensslOpt reads -name, --name, -name=value or -name value.
func (s optSpec) opensslOpt(p *parsed, args []arg, i int) int {
	word := strings.TrimPrefix(args[i].val[1:], "-")
	name, value, eq := strings.Cut(word, "=")
	if name == "h" {
		name = "help"
	}
	full, kind, why := s.lookupLong(name)
	switch {
	case why != "":
		p.unknown = fmt.Sprintf("-%s %s", name, why)
	case eq && kind == noValue:
		p.unknown = fmt.Sprintf("-%s takes no value", full)
	case !eq && kind != noValue && i+1 >= len(args):
		p.unknown = fmt.Sprintf("-%s needs a value", full)
	case !eq && kind != noValue:
		i++
		value = p.valueWord(args[i])
	}
	p.opts = append(p.opts, opt{name: full, long: true, value: value})
	return i
}

// ipOpt reads an iproute2 option: the first in the spec's order that the
// word (without its dashes) is a prefix of.
func (s optSpec) ipOpt(p *parsed, args []arg, i int) int {
	word := strings.TrimPrefix(args[i].val[1:], "-")
	for _, l := range s.long {
		n, kind := splitLong(l)
		if word == "" || !strings.HasPrefix(n, word) {
			continue
		}
		o := opt{name: n, long: true}
		if kind != noValue {
			if i+1 >= len(args) {
				p.unknown = fmt.Sprintf("-%s needs a value", n)
				return i
			}
			i++
			o.value = p.valueWord(args[i])
		}
		p.opts = append(p.opts, o)
		return i
	}
	p.unknown = fmt.Sprintf("%s is not an option the policy knows for this program", args[i].val)
	return i
}

// wholeWordOpt reads an option named exactly as written.
func (s optSpec) wholeWordOpt(p *parsed, args []arg, i int) int {
	for _, l := range s.long {
		n, kind := splitLong(l)
		if n != args[i].val {
			continue
		}
		o := opt{name: strings.TrimLeft(n, "-"), long: true}
		if kind != noValue {
			if i+1 >= len(args) {
				p.unknown = fmt.Sprintf("%s needs a value", n)
				return i
			}
			i++
			o.value = p.valueWord(args[i])
		}
		p.opts = append(p.opts, o)
		return i
	}
	p.unknown = fmt.Sprintf("%s is not an option the policy knows for this program", args[i].val)
	return i
}

// valueWord takes a word as an option's value.
func (p *parsed) valueWord(a arg) string {
	if !a.static() {
		p.noteUnknown([]arg{a})
		return a.src
	}
	return a.val
}

// has reports whether any of the options is present: a single letter
// names a short option, a longer name a long option by its full name.
func (p parsed) has(names ...string) bool {
	return p.find(names...) != nil
}

// findAll returns every occurrence of the options among names, in order.
// A tool given an option twice mostly takes the last one, some use each
// (curl -o per URL): a check of an option's value judges every
// occurrence, never only the first one find returns.
func (p parsed) findAll(names ...string) []opt {
	var out []opt
	for _, o := range p.opts {
		if slices.ContainsFunc(names, func(n string) bool { return matchOpt(o, n) }) {
			out = append(out, o)
		}
	}
	return out
}

// find returns the first option present among names: for presence only;
// a check of the value uses findAll.
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
	switch {
	case len(n) == 1 && !o.long:
		return o.name == n
	case o.guessed && o.long:
		return len(n) > 1 && strings.HasPrefix(n, o.name)
	}
	return o.long && o.name == n
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
