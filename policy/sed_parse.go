package policy

import (
	"fmt"
	"strings"
)

// sedCommand is one command of a sed program as GNU sed compiles it.
type sedCommand struct {
	name  byte   // the command letter
	file  string // the file of r, R, w, W and s///w
	label string // the label of :, b, t, T
	write bool   // s with the w flag
	eval  bool   // s with the e flag
}

// sedEOF is the end of one script (an -e or the operand), as GNU's
// inchar returns EOF.
const sedEOF = -1

// sedParser reads sed scripts exactly as GNU sed 4.8 and 4.9 do
// (sed/compile.c: compile_program and the readers it calls), so that
// where a label, a file name or an a/i/c text ends is where GNU ends it:
// a label ends at a blank, ";", "}" or "#" (`tx e id` is t x, then e id);
// a file name and an e, a, i or c text run to the end of the line, or
// of the -e; an a, i, c or e text ending in a backslash goes on in the
// next -e. Each -e is read on its own, as compile_string does, with the
// state GNU keeps between them: the open blocks and a pending text.
type sedParser struct {
	src     string
	i       int
	posix   bool // --posix: GNU's extensions are unknown commands
	blocks  int  // open { blocks
	pending bool // an a, i, c or e text goes on in the next script
	cmds    []sedCommand
	// continued are the lines of a, i, c and e texts after an escaped
	// newline or an -e's end, where GNU goes on with the text
	continued []string
}

// parseSedScripts reads the -e scripts in order; it returns the commands,
// or why GNU sed refuses the program.
func parseSedScripts(scripts []string, posix bool) ([]sedCommand, string) {
	p, why := parseSed(scripts, posix)
	if why != "" {
		return nil, why
	}
	return p.cmds, ""
}

// parseSed reads the -e scripts in order; it returns the parser's state
// after them, or why GNU sed refuses the program.
func parseSed(scripts []string, posix bool) (*sedParser, string) {
	p := &sedParser{posix: posix}
	for _, s := range scripts {
		if why := p.script(s); why != "" {
			return nil, why
		}
	}
	if p.blocks > 0 {
		return nil, "unmatched `{'"
	}
	return p, ""
}

func (p *sedParser) inchar() int {
	if p.i < len(p.src) {
		p.i++
		return int(p.src[p.i-1])
	}
	return sedEOF
}

func (p *sedParser) savchar(c int) {
	if c != sedEOF {
		p.i--
	}
}

func (p *sedParser) nonblank() int {
	c := p.inchar()
	for c == ' ' || c == '\t' {
		c = p.inchar()
	}
	return c
}

// integer reads the digits starting with c and puts back what follows;
// zero says the number was 0.
func (p *sedParser) integer(c int) (zero bool) {
	zero = true
	for isDigit(c) {
		zero = zero && c == '0'
		c = p.inchar()
	}
	p.savchar(c)
	return zero
}

func isDigit(c int) bool { return c >= '0' && c <= '9' }

// isSedSpace is C's isspace in the C and UTF-8 locales.
func isSedSpace(c int) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// script is compile_program for one script.
func (p *sedParser) script(src string) string {
	p.src, p.i = src, 0
	if p.pending {
		p.readText('\n', true)
	}
	for {
		c := p.inchar()
		for c == ';' || isSedSpace(c) {
			c = p.inchar()
		}
		if c == sedEOF {
			return ""
		}
		if why := p.command(c); why != "" {
			return why
		}
	}
}

// sedAddr is the kind of an address, as far as compile_program checks it.
type sedAddr int

const (
	addrNone  sedAddr = iota
	addrZero          // the line number 0
	addrLine          // another line number, first~step, $ or +0
	addrRegex         // a regular expression
	addrStep          // +N or ~N, only a second address
)

// command reads [addr1[,addr2]][!]command, starting at c.
func (p *sedParser) command(c int) string {
	a1, why := p.address(c)
	if why != "" {
		return why
	}
	a2 := addrNone
	if a1 != addrNone {
		if a1 == addrStep {
			return "invalid usage of +N or ~N as first address"
		}
		if c = p.nonblank(); c == ',' {
			if a2, why = p.address(p.nonblank()); why != "" {
				return why
			} else if a2 == addrNone {
				return "unexpected `,'"
			}
			c = p.nonblank()
		}
		if a1 == addrZero && (a2 == addrNone && c != 'r' || a2 != addrNone && a2 != addrRegex || p.posix) {
			return "invalid usage of line address 0"
		}
	}
	if c == '!' {
		if c = p.nonblank(); c == '!' {
			return "multiple `!'s"
		}
	}
	if p.posix && c >= 0 && strings.IndexByte("eFvzLQTRW", byte(c)) >= 0 {
		return fmt.Sprintf("unknown command: `%c'", c)
	}
	if p.posix && a2 != addrNone && c >= 0 && strings.IndexByte("ail=r", byte(c)) >= 0 {
		return "command only uses one address"
	}
	return p.verb(c, a1 != addrNone, a2 != addrNone)
}

// address is compile_address: it reads one address starting at c, or
// nothing (addrNone) when c does not start one.
func (p *sedParser) address(c int) (sedAddr, string) {
	switch {
	case c == '/' || c == '\\':
		if c == '\\' {
			c = p.inchar()
		}
		if why := p.matchSlash(c, true, "unterminated address regex"); why != "" {
			return addrNone, why
		}
		for !p.posix {
			if c = p.nonblank(); c != 'I' && c != 'M' {
				p.savchar(c)
				break
			}
		}
		return addrRegex, ""
	case isDigit(c):
		zero := p.integer(c)
		if c = p.nonblank(); c != '~' || p.posix {
			p.savchar(c)
		} else if stepZero := p.integer(p.nonblank()); !stepZero {
			return addrLine, ""
		}
		if zero {
			return addrZero, ""
		}
		return addrLine, ""
	case (c == '+' || c == '~') && !p.posix:
		if p.integer(p.nonblank()) {
			return addrLine, "" // ADDR_IS_NULL: it ends the range on the next line
		}
		return addrStep, ""
	case c == '$':
		return addrLine, ""
	}
	return addrNone, ""
}

// matchSlash is match_slash: it reads up to the delimiter, through
// escapes and, in a regular expression, bracket expressions; "" when it
// found the delimiter, else unterminated.
func (p *sedParser) matchSlash(slash int, regex bool, unterminated string) string {
	if slash >= 0x80 {
		// One byte of a multibyte character in a UTF-8 locale, which
		// GNU refuses, or a delimiter of its own in the C locale.
		return "a delimiter that is not an ASCII character"
	}
	c := p.inchar()
	for ; c != sedEOF && c != '\n'; c = p.inchar() {
		switch {
		case c == slash:
			return ""
		case c == '\\':
			if c = p.inchar(); c == sedEOF {
				return unterminated
			}
		case c == '[' && regex:
			if c = p.bracket(); c != ']' {
				p.savchar(c)
				return unterminated
			}
		}
	}
	p.savchar(c)
	return unterminated
}

// bracket is snarf_char_class: it reads a bracket expression after its
// "[" and returns the "]" that ends it, or the newline or EOF that came
// first. Inside, a backslash is itself and [:x:], [.x.], [=x=] are read
// whole.
func (p *sedParser) bracket() int {
	c := p.inchar()
	if c == '^' {
		c = p.inchar()
	}
	if c == ']' {
		c = p.inchar()
	}
	state, delim := 0, 0
	for ; ; c = p.inchar() {
		switch c {
		case sedEOF, '\n':
			return c
		case '.', ':', '=':
			if state == 1 {
				delim, state = c, 2
				continue
			}
			if state == 2 && c == delim {
				state = 3
				continue
			}
		case '[':
			if state == 0 {
				state = 1
			}
			continue
		case ']':
			if state == 0 || state == 1 {
				return c
			}
			if state == 3 {
				state = 0
			}
		}
		state &^= 1
	}
}
