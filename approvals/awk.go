package approvals

import (
	"fmt"
	"strings"
)

// checkAwk allows an awk program known now that cannot run commands or
// write files: no system(), no pipes, no print redirection, no gawk
// extensions loading code.
func checkAwk(args []arg) (Action, string) {
	p := optSpec{shortArg: "FvfEiLlW", longArg: []string{"field-separator", "assign", "file", "exec", "include", "load", "source"}}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("f", "E", "i", "l", "file", "exec", "include", "load", "source"); o != nil {
		return Approve, fmt.Sprintf("awk %s loads program text the policy cannot read", o)
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
func awkUnsafe(prog string) string {
	toks := awkTokens(prog)
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
func awkTokens(s string) []string {
	var toks []string
	operand := false // whether the previous token ends an operand
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || (c == '/' && !operand):
			end := closing(s, i)
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

// closing finds the end of the string or regex opening at s[i].
func closing(s string, i int) int {
	d := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case d:
			return j
		case '\n':
			return -1
		}
	}
	return -1
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
