package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// rule is a compiled config rule.
type rule struct {
	name    string
	hosts   []string
	groups  []string
	program *regexp.Regexp
	args    []*regexp.Regexp // nil for "**"
	anyArgs bool
	action  Action
	reason  string
}

func compileRule(r RuleConfig) rule {
	a, _ := ParseAction(r.Action)
	out := rule{name: r.Name, hosts: r.Hosts, groups: r.Groups, program: globRegexp(r.Program),
		anyArgs: r.Args == nil, action: a, reason: r.Reason}
	for _, p := range r.Args {
		var re *regexp.Regexp
		if p != "**" {
			re = globRegexp(p)
		}
		out.args = append(out.args, re)
	}
	return out
}

// globRegexp compiles a glob in which "*" matches any characters, "/"
// included: argv patterns are about words, not paths, and a deny rule on
// "rm -rf *" must also match "rm -rf /srv/data".
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^(?s:")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(glob) {
				i++
			}
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(")$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile(`^\z.`) // matches nothing; Validate refuses such patterns first
	}
	return re
}

// applies reports whether the rule covers the target and matches the
// command. A word computed at run time could be anything: it matches the
// patterns of approve and deny rules, and never those of allow rules.
func (r rule) applies(t Target, program string, args []arg) bool {
	if !r.coversTarget(t) {
		return false
	}
	if !r.program.MatchString(program) {
		return false
	}
	return r.anyArgs || matchArgs(r.args, args, r.action != Allow)
}

func (r rule) coversTarget(t Target) bool {
	if len(r.hosts) == 0 && len(r.groups) == 0 {
		return true
	}
	if slices.Contains(r.hosts, t.Host) {
		return true
	}
	return slices.ContainsFunc(t.Groups, func(g string) bool { return slices.Contains(r.groups, g) })
}

func (r rule) describe() string {
	label := "config rule"
	if r.name != "" {
		label = fmt.Sprintf("config rule %q", r.name)
	}
	if r.reason != "" {
		return label + ": " + r.reason
	}
	return fmt.Sprintf("%s says %s", label, r.action)
}

// matchArgs matches patterns one to one against words; "**" matches any
// number of words. With lenient set, a word known only at run time
// matches any pattern and may stand for any number of words.
func matchArgs(pats []*regexp.Regexp, args []arg, lenient bool) bool {
	if len(pats) == 0 {
		return len(args) == 0 || (lenient && allUnknown(args))
	}
	if pats[0] == nil {
		for i := 0; i <= len(args); i++ {
			if matchArgs(pats[1:], args[i:], lenient) {
				return true
			}
		}
		return false
	}
	if len(args) == 0 {
		return false
	}
	if lenient && !args[0].static() {
		return matchArgs(pats, args[1:], lenient) || matchArgs(pats[1:], args, lenient) || matchArgs(pats[1:], args[1:], lenient)
	}
	return matchWord(pats[0], args[0]) && matchArgs(pats[1:], args[1:], lenient)
}

func matchWord(pat *regexp.Regexp, a arg) bool {
	return a.static() && pat.MatchString(a.val)
}

func allUnknown(args []arg) bool {
	return !slices.ContainsFunc(args, arg.static)
}
