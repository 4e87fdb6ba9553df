package checks

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The grid's cells: ASCII, so columns line up in every font.
var cell = map[Status]byte{StatusOK: '.', StatusWarn: 'W', StatusFail: 'X', StatusUnreachable: '?'}

// gridWidth is the widest grid line, in characters: narrow enough for a
// phone and for Discord's code blocks.
const gridWidth = 72

// grid is the hosts × checks table: one cell per host, each a host name
// and one character per check, packed several to a line, so that 100 hosts
// fit in about 20 lines. Its title names the columns; with legend, it
// also says what each cell means.
func (rep Report) grid(legend bool) section {
	idx := make(map[string]int, len(rep.Checks))
	for i, c := range rep.Checks {
		idx[c] = i
	}
	marks := make(map[string][]byte, len(rep.Hosts))
	nameWidth := 0
	for _, h := range rep.Hosts {
		marks[h] = []byte(strings.Repeat("-", len(rep.Checks)))
		nameWidth = max(nameWidth, utf8.RuneCountInString(h))
	}
	for _, r := range rep.Results {
		if i, ok := idx[r.Check]; ok {
			marks[r.Host][i] = cell[r.Status]
		}
	}
	width := nameWidth + 1 + len(rep.Checks)
	perLine := max(1, (gridWidth+2)/(width+2))
	s := section{title: rep.legend(legend), code: true}
	var line strings.Builder
	for i, h := range rep.Hosts {
		if i%perLine > 0 {
			line.WriteString("  ")
		}
		fmt.Fprintf(&line, "%-*s %s", nameWidth, h, marks[h])
		if i%perLine == perLine-1 || i == len(rep.Hosts)-1 {
			s.lines = append(s.lines, strings.TrimRight(line.String(), " "))
			line.Reset()
		}
	}
	return s
}

// legend names the grid's columns, and with cells what each cell means.
func (rep Report) legend(cells bool) string {
	title := "**Grid** — one character per check: " + strings.Join(rep.Checks, ", ")
	if !cells {
		return title
	}
	return title + "; `.` ok, `W` warning, `X` failing, `?` unreachable, `-` not checked"
}

// runes is the length platforms count: characters, not bytes.
func runes(s string) int { return utf8.RuneCountInString(s) }

const fence = "```"

// packer splits a report's lines into messages of at most max runes,
// never inside a line; a code block is closed at the end of a message and
// reopened in the next.
type packer struct {
	max    int
	texts  []string
	cur    string
	inCode bool
}

// section writes s after a blank line; its title starts a new message
// when the title and its first line would not fit together.
func (p *packer) section(s section) {
	if len(s.lines) > 0 && p.cur != "" {
		need := 2 + runes(s.title) + 1 + runes(s.lines[0])
		if s.code {
			need += 2 * (1 + len(fence))
		}
		if runes(p.cur)+need > p.max {
			p.flush()
		}
	}
	p.write("", false)
	p.write(s.title, false)
	for _, l := range s.lines {
		p.write(l, s.code)
	}
}

// write adds one line, in a code block or not.
func (p *packer) write(line string, code bool) {
	if !code && p.inCode {
		p.cur += "\n" + fence
		p.inCode = false
	}
	if line == "" && (p.cur == "" || code) {
		return
	}
	reserve := 0 // the closing fence
	if code {
		reserve = 1 + len(fence)
	}
	line = cut(line, p.max-2*(1+len(fence)))
	open := code && !p.inCode
	need := runes(line) + reserve + 1
	if open {
		need += len(fence) + 1
	}
	if p.cur != "" && runes(p.cur)+need > p.max {
		p.flush()
		open = code
	}
	if open {
		p.append(fence)
		p.inCode = true
	}
	p.append(line)
}

func (p *packer) append(line string) {
	if p.cur == "" {
		p.cur = line
		return
	}
	p.cur += "\n" + line
}

// flush ends the current message.
func (p *packer) flush() {
	if p.inCode {
		p.cur += "\n" + fence
		p.inCode = false
	}
	if strings.TrimSpace(p.cur) != "" {
		p.texts = append(p.texts, strings.TrimRight(p.cur, "\n"))
	}
	p.cur = ""
}

// cut shortens s to n runes, marking the cut.
func cut(s string, n int) string {
	if runes(s) <= n || n < 1 {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
