package policy

import (
	"fmt"
	"strings"
)

// awkTok is one awk token: its kind and its text.
type awkTok struct {
	kind byte // 'n' name, 'f' name followed by "(", 'k' keyword, 'b' builtin function, '1' number, 's' string, 'r' regex, 'o' operator, ';' newline or semicolon
	text string
}

var awkKeywords = map[string]bool{"BEGIN": true, "END": true, "function": true, "func": true, "if": true, "else": true, "while": true,
	"for": true, "do": true, "break": true, "continue": true, "next": true, "nextfile": true, "exit": true, "return": true,
	"delete": true, "in": true, "getline": true, "print": true, "printf": true, "BEGINFILE": true, "ENDFILE": true}

// awkBuiltins are the builtin functions that only compute; system(),
// close() of a pipe and the I/O extensions are not among them.
var awkBuiltins = map[string]bool{"length": true, "substr": true, "index": true, "split": true, "sub": true, "gsub": true,
	"match": true, "sprintf": true, "tolower": true, "toupper": true, "int": true, "sqrt": true, "exp": true, "log": true,
	"sin": true, "cos": true, "atan2": true, "rand": true, "srand": true, "gensub": true, "strftime": true, "systime": true,
	"mktime": true, "and": true, "or": true, "xor": true, "lshift": true, "rshift": true, "compl": true, "strtonum": true}

// awkOperators, longest first.
var awkOperators = []string{"**=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "==", "<=", ">=", "!=", "!~", ">>",
	"|&", "**", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?", ":", "~", "$", "="}

// awkLex splits an awk program into tokens. A "/" starts a regular
// expression unless it follows an operand, as in awk's grammar. A regex
// whose bracket expression holds a "/" is refused: gawk reads [/] as a
// bracket, simpler lexers end the regex there, and each reading would
// see a different program.
func awkLex(src string) ([]awkTok, string) {
	var toks []awkTok
	for i := 0; i < len(src); {
		c := src[i]
		operand := len(toks) > 0 && awkEndsOperand(toks[len(toks)-1])
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
		case c == '\n':
			toks = append(toks, awkTok{';', "\n"})
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || (c == '/' && !operand):
			end, why := awkQuoted(src, i)
			if why != "" {
				return nil, why
			}
			kind := byte('s')
			if c == '/' {
				kind = 'r'
			}
			toks = append(toks, awkTok{kind, src[i : end+1]})
			i = end + 1
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			j := i
			for j < len(src) && (isIdent(src[j]) || src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			toks = append(toks, awkTok{'1', src[i:j]})
			i = j
		case isIdent(c):
			j := i
			for j < len(src) && (isIdent(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, awkName(src[i:j], j < len(src) && src[j] == '('))
			i = j
		default:
			op := ""
			for _, o := range awkOperators {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Sprintf("the awk program has %q, which the policy does not read (@include and @load load code)", c)
			}
			if op == ";" {
				toks = append(toks, awkTok{';', ";"})
			} else {
				toks = append(toks, awkTok{'o', op})
			}
			i += len(op)
		}
	}
	return toks, ""
}

func awkName(name string, call bool) awkTok {
	switch {
	case awkKeywords[name]:
		return awkTok{'k', name}
	case awkBuiltins[name]:
		return awkTok{'b', name}
	case call:
		return awkTok{'f', name}
	}
	return awkTok{'n', name}
}

// awkEndsOperand reports whether a "/" after t is division.
func awkEndsOperand(t awkTok) bool {
	switch t.kind {
	case 'n', '1', 's', 'r', 'b':
		return true
	case 'o':
		return t.text == ")" || t.text == "]" || t.text == "$" || t.text == "++" || t.text == "--"
	}
	return false
}

// awkQuoted finds the end of the string or regex starting at src[i].
func awkQuoted(src string, i int) (int, string) {
	d := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case d:
			return j, ""
		case '\n':
			return 0, "the awk program has a string or regex that does not end on its line"
		case '[':
			if d != '/' {
				continue
			}
			end := bracketEnd(src, j)
			if end < 0 {
				return 0, "the awk program has a bracket expression that does not end"
			}
			if strings.ContainsRune(src[j:end], '/') {
				return 0, "the awk regex has a / inside [...], where awk implementations disagree on where it ends"
			}
			j = end
		}
	}
	return 0, "the awk program has a string or regex that does not end"
}

// bracketEnd returns the index of the "]" closing the bracket expression
// opening at s[i], or -1: "]" first is literal, as are [:class:] names.
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
