package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// readEnd is read_end_of_cmd: only a blank, then ; or a newline or the
// end, or } or # (left for the next command), may follow a command.
func (p *sedParser) readEnd() string {
	switch c := p.nonblank(); c {
	case '}', '#':
		p.savchar(c)
	case sedEOF, '\n', ';':
	default:
		return "extra characters after command"
	}
	return ""
}

// label is read_label: blanks, then up to a blank, ";", "}", "#", a
// newline or the end, which is left for the next command.
func (p *sedParser) label() string {
	var b strings.Builder
	c := p.nonblank()
	for c != sedEOF && c != '\n' && c != ' ' && c != '\t' && c != ';' && c != '}' && c != '#' {
		b.WriteByte(byte(c))
		c = p.inchar()
	}
	p.savchar(c)
	return b.String()
}

// filename is read_filename: blanks, then the rest of the line; the
// newline is consumed.
func (p *sedParser) filename() string {
	c := p.nonblank()
	if c == sedEOF || c == '\n' {
		return ""
	}
	start := p.i - 1
	for c != sedEOF && c != '\n' {
		c = p.inchar()
	}
	end := p.i
	if c == '\n' {
		end--
	}
	return p.src[start:end]
}

// readText is read_text: the text of a, i, c or e after leadin, up to an
// unescaped newline; a backslash at the end of the script leaves the text
// pending, to go on with the next script's first line. The lines after
// the first, which another sed could end the text before, are kept in
// p.continued; so is the first when it goes on from an earlier script.
func (p *sedParser) readText(leadin int, continued bool) {
	p.pending = true
	if leadin == sedEOF {
		return
	}
	start := p.i
	c := p.inchar()
	for c != sedEOF && c != '\n' {
		if c == '\\' {
			if c = p.inchar(); c == '\n' {
				p.keepLine(start, p.i-2, continued)
				start, continued = p.i, true
			}
		}
		if c == sedEOF {
			p.keepLine(start, p.i, continued)
			return
		}
		c = p.inchar()
	}
	end := p.i
	if c == '\n' {
		end--
	}
	p.keepLine(start, end, continued)
	p.pending = false
}

func (p *sedParser) keepLine(start, end int, continued bool) {
	if continued && start <= end {
		p.continued = append(p.continued, p.src[start:end])
	}
}

// verb reads the command letter c and what follows it, as the switch of
// compile_program does.
func (p *sedParser) verb(c int, addr, addr2 bool) string {
	cmd := sedCommand{name: byte(c)}
	why := ""
	switch {
	case c == '#' || c == 'v':
		return p.comment(c, addr)
	case c == '{':
		p.blocks++
	case c == '}':
		why = p.closeBlock(addr)
	case c == 'e', c == 'a' || c == 'i' || c == 'c':
		why = p.text(c)
	case c == ':':
		if cmd.label = p.label(); addr {
			why = ": doesn't want any addresses"
		} else if cmd.label == "" {
			why = `":" lacks a label`
		}
	case c == 'b' || c == 't' || c == 'T':
		cmd.label = p.label()
	case c == 'q' || c == 'Q' || c == 'l' || c == 'L':
		why = p.count(c, addr2)
	case c >= 0 && strings.IndexByte("=dDFgGhHnNpPzx", byte(c)) >= 0:
		why = p.readEnd()
	case c == 'r' || c == 'R' || c == 'w' || c == 'W':
		if cmd.file = p.filename(); cmd.file == "" {
			why = "missing filename in r/R/w/W commands"
		}
	case c == 's':
		why = p.substitute(&cmd)
	case c == 'y':
		why = p.translate()
	case c == sedEOF:
		why = "missing command"
	default:
		why = fmt.Sprintf("unknown command: `%c'", c)
	}
	if why == "" {
		p.cmds = append(p.cmds, cmd)
	}
	return why
}

// comment reads # to the end of the line, or v and the version GNU sed
// must have at least; neither is a command.
func (p *sedParser) comment(c int, addr bool) string {
	if c == 'v' {
		if !sedVersionOK(p.label()) {
			return "expected newer version of sed"
		}
		return ""
	}
	if addr {
		return "comments don't accept any addresses"
	}
	for c != sedEOF && c != '\n' {
		c = p.inchar()
	}
	return ""
}

func (p *sedParser) closeBlock(addr bool) string {
	switch {
	case p.blocks == 0:
		return "unexpected `}'"
	case addr:
		return "`}' doesn't want any addresses"
	}
	p.blocks--
	return p.readEnd()
}

// count reads the optional number of q, Q, l and L.
func (p *sedParser) count(c int, addr2 bool) string {
	if addr2 && (c == 'q' || c == 'Q') {
		return "command only uses one address"
	}
	if c = p.nonblank(); isDigit(c) && !p.posix {
		p.integer(c)
	} else {
		p.savchar(c)
	}
	return p.readEnd()
}

// translate reads y/source/dest/; GNU's check that both have as many
// characters is left out: a y GNU refuses only stops sed earlier.
func (p *sedParser) translate() string {
	slash := p.inchar()
	for range 2 {
		if why := p.matchSlash(slash, false, "unterminated `y' command"); why != "" {
			return why
		}
	}
	return p.readEnd()
}

// text reads the text of a, i, c or e: after blanks, a backslash and
// the text, or (a GNU extension) the text itself; e alone at the end of
// a line runs the pattern space.
func (p *sedParser) text(cmd int) string {
	c := p.nonblank()
	if cmd == 'e' && (c == sedEOF || c == '\n') {
		return ""
	}
	switch {
	case c == sedEOF:
		return "expected \\ after `a', `c' or `i'"
	case c == '\\':
		c = p.inchar()
	case p.posix:
		return "expected \\ after `a', `c' or `i'"
	default:
		p.savchar(c)
		c = '\n'
	}
	p.readText(c, false)
	return ""
}

// substitute reads s/regex/replacement/flags (mark_subst_opts): the w
// flag takes the rest of the line as its file.
func (p *sedParser) substitute(cmd *sedCommand) string {
	slash := p.inchar()
	if why := p.matchSlash(slash, true, "unterminated `s' command"); why != "" {
		return why
	}
	if why := p.matchSlash(slash, false, "unterminated `s' command"); why != "" {
		return why
	}
	seen := map[int]bool{}
	for {
		c := p.nonblank()
		switch {
		case (c == 'i' || c == 'I' || c == 'm' || c == 'M' || c == 'e') && !p.posix:
			cmd.eval = cmd.eval || c == 'e'
		case c == 'p' || c == 'g':
			if seen[c] {
				return fmt.Sprintf("multiple `%c' options to `s' command", c)
			}
			seen[c] = true
		case c == 'w':
			if cmd.write, cmd.file = true, p.filename(); cmd.file == "" {
				return "missing filename in r/R/w/W commands"
			}
			return ""
		case isDigit(c):
			if seen['0'] {
				return "multiple number options to `s' command"
			}
			if seen['0'] = true; p.integer(c) {
				return "number option to `s' command may not be zero"
			}
		case c == '}' || c == '#':
			p.savchar(c)
			return ""
		case c == sedEOF || c == '\n' || c == ';':
			return ""
		case c == '\r' && p.inchar() == '\n':
			return ""
		default:
			return "unknown option to `s'"
		}
	}
}

// sedVersionOK reports whether every GNU sed from 4.8 on accepts v with
// this version (none, or at most 4.8); the policy reads any other as GNU
// sed refusing the script.
func sedVersionOK(v string) bool { return v == "" || sedOldVersion.MatchString(v) }

var sedOldVersion = regexp.MustCompile(`^(?:[0-3](?:\.[0-9]+)*|4(?:\.[0-8](?:\.[0-9]+)*)?)$`)
