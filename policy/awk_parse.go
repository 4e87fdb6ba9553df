package policy

import (
	"fmt"
	"strings"
)

// awkParser is a recursive-descent parser for the part of awk the
// policy allows (POSIX awk's grammar, without functions, getline from a
// command, or output redirection). Each method returns "" or why the
// program is not in that part.
type awkParser struct {
	toks  []awkTok
	i     int
	files []string // the files getline reads, each a string constant
}

func (p *awkParser) peek() awkTok {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return awkTok{kind: 0}
}

func (p *awkParser) is(kind byte, text string) bool {
	t := p.peek()
	return t.kind == kind && (text == "" || t.text == text)
}

func (p *awkParser) op(text string) bool { return p.is('o', text) }

func (p *awkParser) accept(kind byte, text string) bool {
	if p.is(kind, text) {
		p.i++
		return true
	}
	return false
}

func (p *awkParser) expect(kind byte, text string) string {
	if p.accept(kind, text) {
		return ""
	}
	return p.unexpected()
}

func (p *awkParser) unexpected() string {
	t := p.peek()
	switch {
	case t.kind == 0:
		return "the awk program ends too early"
	case t.kind == 'f':
		return fmt.Sprintf("awk calls %s(), which is not a builtin that only computes", t.text)
	case t.kind == 'k' && t.text == "function" || t.text == "func":
		return "the awk program defines functions, which the policy does not read"
	case t.kind == 'o' && (t.text == "|" || t.text == "|&"):
		return "awk pipes to or from a command"
	case t.kind == 'o' && (t.text == ">" || t.text == ">>"):
		return "awk print > writes a file"
	}
	return fmt.Sprintf("the awk program has %q where the policy's awk grammar does not expect it", t.text)
}

func (p *awkParser) newlines() {
	for p.accept(';', "\n") {
	}
}

func (p *awkParser) terminators() {
	for p.accept(';', "") {
	}
}

// program: items separated by newlines or semicolons.
func (p *awkParser) program() string {
	for p.terminators(); p.i < len(p.toks); p.terminators() {
		if why := p.item(); why != "" {
			return why
		}
	}
	return ""
}

// item: BEGIN/END action, or pattern[, pattern] [action], or action.
func (p *awkParser) item() string {
	if p.accept('k', "BEGIN") || p.accept('k', "END") {
		p.newlines()
		return p.block()
	}
	if p.op("{") {
		return p.block()
	}
	if why := p.expr(false); why != "" {
		return why
	}
	if p.accept('o', ",") {
		p.newlines()
		if why := p.expr(false); why != "" {
			return why
		}
	}
	if p.op("{") {
		return p.block()
	}
	if !p.is(';', "") && p.i < len(p.toks) {
		return p.unexpected()
	}
	return ""
}

func (p *awkParser) block() string {
	if why := p.expect('o', "{"); why != "" {
		return why
	}
	for p.terminators(); !p.op("}"); p.terminators() {
		if p.i >= len(p.toks) {
			return p.unexpected()
		}
		if why := p.stmt(); why != "" {
			return why
		}
	}
	p.i++
	return ""
}

// stmt is one statement; a simple one ends at ; or a newline or }.
func (p *awkParser) stmt() string {
	t := p.peek()
	switch {
	case t.kind == 'o' && t.text == "{":
		return p.block()
	case t.kind == 'k' && (t.text == "if" || t.text == "while"):
		return p.condStmt(t.text)
	case t.kind == 'k' && t.text == "do":
		p.i++
		p.newlines()
		if why := p.stmt(); why != "" {
			return why
		}
		p.terminators()
		if why := p.expect('k', "while"); why != "" {
			return why
		}
		return p.paren()
	case t.kind == 'k' && t.text == "for":
		return p.forStmt()
	case t.kind == 'k' && (t.text == "next" || t.text == "nextfile" || t.text == "break" || t.text == "continue"):
		p.i++
	case t.kind == 'k' && t.text == "exit":
		p.i++
		if !p.endOfSimple() {
			if why := p.expr(false); why != "" {
				return why
			}
		}
	case t.kind == 'k' && t.text == "delete":
		p.i++
		if why := p.expect('n', ""); why != "" {
			return why
		}
		if p.accept('o', "[") {
			if why := p.exprList(false, "]"); why != "" {
				return why
			}
		}
	case t.kind == 'k' && (t.text == "print" || t.text == "printf"):
		if why := p.print(); why != "" {
			return why
		}
	default:
		if why := p.expr(false); why != "" {
			return why
		}
	}
	if !p.endOfSimple() {
		return p.unexpected()
	}
	return ""
}

func (p *awkParser) endOfSimple() bool {
	return p.is(';', "") || p.op("}") || p.i >= len(p.toks)
}

// condStmt: if (expr) stmt [else stmt], while (expr) stmt.
func (p *awkParser) condStmt(kw string) string {
	p.i++
	if why := p.paren(); why != "" {
		return why
	}
	p.newlines()
	if p.accept(';', ";") { // while (x);
		return ""
	}
	if why := p.stmt(); why != "" {
		return why
	}
	if kw == "if" {
		save := p.i
		p.terminators()
		if p.accept('k', "else") {
			p.newlines()
			return p.stmt()
		}
		p.i = save
	}
	return ""
}

func (p *awkParser) paren() string {
	if why := p.expect('o', "("); why != "" {
		return why
	}
	if why := p.expr(false); why != "" {
		return why
	}
	return p.expect('o', ")")
}

// forStmt: for (init; cond; step) stmt, or for (name in array) stmt.
func (p *awkParser) forStmt() string {
	p.i++
	if why := p.expect('o', "("); why != "" {
		return why
	}
	if p.is('n', "") && p.i+2 < len(p.toks) && p.toks[p.i+1].kind == 'k' && p.toks[p.i+1].text == "in" && p.toks[p.i+2].kind == 'n' &&
		p.i+3 < len(p.toks) && p.toks[p.i+3].text == ")" {
		p.i += 4
	} else {
		for part := 0; part < 3; part++ {
			end := ";"
			if part == 2 {
				end = ")"
			}
			if !(p.is(';', ";") || p.op(")")) {
				if why := p.expr(false); why != "" {
					return why
				}
			}
			if !(p.accept(';', end) || p.accept('o', end)) {
				return p.unexpected()
			}
			p.newlines()
		}
	}
	p.newlines()
	if p.accept(';', ";") {
		return ""
	}
	return p.stmt()
}

// print: print [exprs] or print(exprs), never followed by > >> | |&.
func (p *awkParser) print() string {
	p.i++
	if !p.endOfSimple() && !p.redirect() {
		if why := p.exprList(true, ""); why != "" {
			return why
		}
	}
	if p.redirect() {
		return p.unexpected()
	}
	return ""
}

func (p *awkParser) redirect() bool {
	return p.op(">") || p.op(">>") || p.op("|") || p.op("|&")
}

// exprList reads expressions separated by commas, up to close when it
// is set.
func (p *awkParser) exprList(noGT bool, close string) string {
	for {
		if why := p.expr(noGT); why != "" {
			return why
		}
		if !p.accept('o', ",") {
			break
		}
		p.newlines()
	}
	if close != "" {
		return p.expect('o', close)
	}
	return ""
}

// expr: assignment and the conditional, then the binary levels. noGT
// leaves a top-level ">" to print, which reads it as a redirection.
func (p *awkParser) expr(noGT bool) string {
	if why := p.binary(0, noGT); why != "" {
		return why
	}
	if p.accept('o', "?") {
		p.newlines()
		if why := p.expr(noGT); why != "" {
			return why
		}
		p.newlines()
		if why := p.expect('o', ":"); why != "" {
			return why
		}
		p.newlines()
		return p.expr(noGT)
	}
	for _, a := range []string{"=", "+=", "-=", "*=", "/=", "%=", "^=", "**="} {
		if p.accept('o', a) {
			p.newlines()
			return p.expr(noGT)
		}
	}
	return ""
}

// awkLevels are the binary operators from the loosest; concatenation
// sits between the comparisons and + -.
var awkLevels = [][]string{{"||"}, {"&&"}, {"in"}, {"~", "!~"}, {"<", "<=", "!=", "==", ">", ">="}, {"concat"}, {"+", "-"}, {"*", "/", "%"}}

func (p *awkParser) binary(level int, noGT bool) string {
	if level == len(awkLevels) {
		return p.unary(noGT)
	}
	if why := p.binary(level+1, noGT); why != "" {
		return why
	}
	for {
		ops := awkLevels[level]
		switch {
		case ops[0] == "concat":
			if !p.startsOperand() {
				return ""
			}
		case ops[0] == "in":
			if !p.accept('k', "in") {
				return ""
			}
			if why := p.expect('n', ""); why != "" {
				return why
			}
			continue
		default:
			matched := false
			for _, o := range ops {
				if o == ">" && noGT {
					continue
				}
				if p.accept('o', o) {
					matched = true
					break
				}
			}
			if !matched {
				return ""
			}
			if level <= 1 {
				p.newlines()
			}
		}
		if why := p.binary(level+1, noGT); why != "" {
			return why
		}
	}
}

// startsOperand reports whether the next token begins an operand that
// concatenates with the one before (not a unary + or -).
func (p *awkParser) startsOperand() bool {
	t := p.peek()
	switch t.kind {
	case 'n', '1', 's', 'r', 'b', 'f':
		return true
	case 'o':
		return t.text == "$" || t.text == "(" || t.text == "!" || t.text == "++" || t.text == "--"
	case 'k':
		return t.text == "getline"
	}
	return false
}

// unary: ! - + prefix, then ^ (right-associative), then postfix.
func (p *awkParser) unary(noGT bool) string {
	if p.accept('o', "!") || p.accept('o', "-") || p.accept('o', "+") {
		return p.unary(noGT)
	}
	if why := p.postfix(noGT); why != "" {
		return why
	}
	if p.accept('o', "^") || p.accept('o', "**") {
		return p.unary(noGT)
	}
	return ""
}

func (p *awkParser) postfix(noGT bool) string {
	if why := p.primary(noGT); why != "" {
		return why
	}
	if p.accept('o', "++") || p.accept('o', "--") {
		return ""
	}
	return ""
}

// primary: a constant, a variable or array element, $expr, a
// parenthesised expression or grouping, ++/-- prefix, a builtin call, or
// getline from the input or a file.
func (p *awkParser) primary(noGT bool) string {
	t := p.peek()
	switch {
	case t.kind == '1' || t.kind == 's' || t.kind == 'r':
		p.i++
	case t.kind == 'o' && (t.text == "++" || t.text == "--" || t.text == "$"):
		p.i++
		return p.primary(noGT)
	case t.kind == 'o' && t.text == "(":
		p.i++
		if why := p.exprList(false, ")"); why != "" {
			return why
		}
	case t.kind == 'n':
		p.i++
		if p.accept('o', "[") {
			return p.exprList(false, "]")
		}
	case t.kind == 'b':
		p.i++
		if p.accept('o', "(") && !p.accept('o', ")") {
			return p.exprList(false, ")")
		}
	case t.kind == 'k' && t.text == "getline":
		p.i++
		if p.is('n', "") || p.op("$") {
			if why := p.primary(noGT); why != "" {
				return why
			}
		}
		if p.accept('o', "<") {
			return p.getlineFile()
		}
	default:
		return p.unexpected()
	}
	return ""
}

// getlineFile reads the file of getline < FILE: only a string constant
// without escapes is read, and it must end the getline (a ")" or the end
// of the statement): awks disagree on how far FILE runs (mawk and gawk end
// `getline < "/etc/" "shadow"` after "/etc/", POSIX calls it ambiguous),
// and a name computed at run time could be any file, a credential or a
// gawk /inet/ socket.
func (p *awkParser) getlineFile() string {
	t := p.peek()
	if t.kind != 's' || strings.ContainsRune(t.text, '\\') {
		return "awk getline reads a file whose name is computed when it runs (only a plain string constant is read)"
	}
	p.i++
	if !p.endOfSimple() && !p.op(")") {
		return "awk getline < FILE is followed by more of an expression, where awks disagree on the file's name"
	}
	p.files = append(p.files, t.text[1:len(t.text)-1])
	return ""
}
