package approvals

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
	if why := awkUnsafe(p.operands[0].val); why != "" {
		return Approve, why
	}
	return Allow, "the awk program only reads and prints"
}

// awkUnsafe scans an awk program for what can run a command or write a
// file. Strings and regular expressions are skipped; a "/" after an
// operand is division. When unsure it reports unsafe.
//
// awk implementations disagree on where a regular expression ends when a
// bracket expression holds a slash (/[/"]/): gawk reads [/"] as one
// bracket, a simpler lexer ends the regex at the inner slash. The program
// is read both ways, and both readings must be safe.
func awkUnsafe(prog string) string {
	for _, brackets := range []bool{true, false} {
		if why := awkUnsafeReading(awkTokens(prog, brackets)); why != "" {
			return why
		}
	}
	return ""
}

// awkUnsafeReading judges one tokenization of an awk program.
func awkUnsafeReading(toks []string) string {
	inPrint, depth := false, 0
	for _, t := range toks {
		switch t {
		case "system":
			return "awk system() runs a command"
		case "@":
			return "awk @include/@load loads code"
		case "|", "|&":
			return "awk pipes to or from a command"
		case "print", "printf":
			inPrint, depth = true, 0
		case "(":
			depth++
		case ")":
			depth--
		case ";", "{", "}", "\n":
			inPrint = false
		case ">", ">>":
			if inPrint && depth <= 0 {
				return "awk print > writes a file"
			}
		case "?unterminated":
			return "the awk program could not be read"
		}
	}
	return ""
}

// awkTokens splits an awk program into the tokens awkUnsafe needs:
// identifiers, the operators | |& || > >> ( ) ; { } and newlines, with
// strings, regular expressions and comments dropped.
func awkTokens(s string, brackets bool) []string {
	var toks []string
	operand := false // whether the previous token ends an operand
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || (c == '/' && !operand):
			end := closing(s, i, brackets && c == '/')
			if end < 0 {
				return append(toks, "?unterminated")
			}
			i, operand = end, true
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			toks = append(toks, "\n")
			operand = false
		case isIdent(c):
			j := i
			for j < len(s) && (isIdent(s[j]) || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			toks = append(toks, s[i:j])
			i, operand = j-1, true
		case c == '|' || c == '>':
			n := 1
			if i+1 < len(s) && (s[i+1] == c || (c == '|' && s[i+1] == '&')) {
				n = 2
			}
			toks = append(toks, s[i:i+n])
			i, operand = i+n-1, false
		case strings.IndexByte("();{}\n@", c) >= 0:
			toks = append(toks, string(c))
			operand = c == ')'
		case c == ' ' || c == '\t':
		default:
			operand = (c >= '0' && c <= '9') || c == ']' || c == '$' || c == '.'
		}
	}
	return toks
}

// closing finds the end of the string or regex opening at s[i]; with
// brackets, a "[…]" bracket expression in a regex is skipped whole
// ("]" first in it is literal, as are [:class:] names).
func closing(s string, i int, brackets bool) int {
	d := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case d:
			return j
		case '\n':
			return -1
		case '[':
			if brackets {
				if j = bracketEnd(s, j); j < 0 {
					return -1
				}
			}
		}
	}
	return -1
}

// bracketEnd returns the index of the "]" closing the bracket expression
// opening at s[i], or -1.
func bracketEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for ; j < len(s); j++ {
		switch {
		case s[j] == '\n':
			return -1
		case s[j] == '[' && j+1 < len(s) && strings.IndexByte(":.=", s[j+1]) >= 0:
			end := strings.Index(s[j+2:], string(s[j+1])+"]")
			if end < 0 {
				return -1
			}
			j += 2 + end + 1
		case s[j] == ']':
			return j
		}
	}
	return -1
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
