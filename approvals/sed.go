package approvals

import (
	"fmt"
	"strings"
)

// checkSed allows sed that only prints: no -i, no script file, and a
// script made of commands that cannot write files or run programs.
func checkSed(args []arg) (Action, string) {
	p := sedSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("i", "in-place"); o != nil {
		return Approve, fmt.Sprintf("sed %s edits files in place", o)
	}
	if o := p.find("f", "file"); o != nil {
		return Approve, "sed -f runs a script file the policy cannot read"
	}
	var scripts []string
	for _, o := range p.opts {
		if matchOpt(o, "e") || matchOpt(o, "expression") {
			scripts = append(scripts, o.value)
		}
	}
	if len(scripts) == 0 {
		if len(p.operands) == 0 || !p.operands[0].static() {
			return Approve, "sed without a script known now"
		}
		scripts = append(scripts, p.operands[0].val)
	}
	// GNU sed joins -e scripts with newlines and reads the result as one
	// script (-e 'a\' -e TEXT): each part and the whole must be safe.
	for _, s := range append(scripts, strings.Join(scripts, "\n")) {
		if why := sedUnsafe(s); why != "" {
			return Approve, why
		}
	}
	return Allow, "sed only prints"
}

// sedUnsafe scans a sed script; it returns why the script may write a
// file or run a program, or why it could not be read, or "".
func sedUnsafe(script string) string {
	s := &sedScanner{src: script}
	for s.skipSpace(); s.i < len(s.src); s.skipSpace() {
		if why := s.command(); why != "" {
			return why
		}
	}
	return ""
}

type sedScanner struct {
	src string
	i   int
}

func (s *sedScanner) skipSpace() {
	for s.i < len(s.src) && strings.IndexByte(" \t\n;", s.src[s.i]) >= 0 {
		s.i++
	}
}

func (s *sedScanner) peek() byte {
	if s.i < len(s.src) {
		return s.src[s.i]
	}
	return 0
}

// command reads [address[,address]][!]cmd.
func (s *sedScanner) command() string {
	if s.address() && s.peek() == ',' {
		s.i++
		s.address()
	}
	for s.peek() == '!' || s.peek() == ' ' {
		s.i++
	}
	c := s.peek()
	s.i++
	switch {
	case c == 0:
		return ""
	case strings.IndexByte("pdDqQ=nNgGhHxlzF{}", c) >= 0:
		s.skipToEnd(c == 'q' || c == 'Q' || c == 'l')
		return ""
	case c == 's':
		return s.substitute()
	case c == 'y':
		s.delimited(2, 0)
		return ""
	case c == 'a' || c == 'i' || c == 'c':
		s.toLineEnd() // GNU one-liner text runs to the end of the script line
		return ""
	case c == 'b' || c == 't' || c == 'T' || c == ':':
		s.skipToEnd(true)
		return ""
	case c == 'w' || c == 'W':
		return "sed w writes a file"
	case c == 'e':
		return "sed e runs a command"
	case c == 'r' || c == 'R':
		s.toLineEnd() // reading a file into the output is read-only
		return ""
	}
	return fmt.Sprintf("sed command %q is not understood", c)
}

// address reads one address; it reports whether there was one.
func (s *sedScanner) address() bool {
	start := s.i
	switch c := s.peek(); {
	case c >= '0' && c <= '9':
		for (s.peek() >= '0' && s.peek() <= '9') || s.peek() == '~' {
			s.i++
		}
	case c == '$':
		s.i++
	case c == '/' || c == '\\':
		if c == '\\' {
			s.i++
		}
		s.delimited(1, 1)
		for s.peek() == 'I' || s.peek() == 'M' {
			s.i++
		}
	}
	return s.i > start
}

// delimited skips n delimited fields starting at the delimiter; the
// first regex fields are regular expressions, in which GNU sed reads a
// bracket expression whole, the delimiter included (s/[/]/x/ is one s).
func (s *sedScanner) delimited(n, regex int) {
	d := s.peek()
	s.i++
	for field := 0; n > 0 && s.i < len(s.src); s.i++ {
		switch c := s.src[s.i]; {
		case c == '\\':
			s.i++
		case c == d:
			n--
			field++
		case c == '[' && field < regex:
			end := bracketEnd(s.src, s.i)
			if end < 0 {
				s.i = len(s.src)
				return
			}
			s.i = end
		}
	}
}

// substitute reads s/re/repl/flags; the e and w flags run and write.
func (s *sedScanner) substitute() string {
	s.delimited(2, 1)
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == 'e':
			return "sed s///e runs the result as a command"
		case c == 'w':
			return "sed s///w writes a file"
		case strings.IndexByte("gpiImM0123456789", c) >= 0:
			s.i++
		default:
			return ""
		}
	}
	return ""
}

// skipToEnd skips an optional argument up to the end of the command.
func (s *sedScanner) skipToEnd(withArg bool) {
	for withArg && s.i < len(s.src) && s.src[s.i] != ';' && s.src[s.i] != '\n' && s.src[s.i] != '}' {
		s.i++
	}
}

func (s *sedScanner) toLineEnd() {
	if nl := strings.IndexByte(s.src[s.i:], '\n'); nl >= 0 {
		s.i += nl
	} else {
		s.i = len(s.src)
	}
}
