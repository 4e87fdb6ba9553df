package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A wildcard pattern stands for the strings a word may become once the
// shell has expanded it, or for the paths a secret entry covers:
// anyString matches any run of bytes, "/" included (a variable may hold
// "a/b"), anyName a run without "/" (a glob's "*"), and anyByte one byte.
// All are control bytes, which no command the classifier walks contains
// (checkText denies them) and no config entry may hold (Validate refuses
// them).
const (
	anyString = '\x00'
	anyByte   = '\x01'
	anyName   = '\x02'
	// noDot comes before an anyName that starts a path element: bash's
	// "*" there matches no leading "." (.aws is not in dir/*).
	noDot = '\x03'
)

// wordPattern is a parsed word as a pattern: literal text as it is,
// unquoted glob characters and everything computed at run time
// (parameters, substitutions, brace lists, ANSI-C strings) as wildcards.
func wordPattern(w *syntax.Word) string {
	parts := w.Parts
	if hasBraceList(w) {
		cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
		syntax.SplitBraces(cp)
		parts = cp.Parts
	}
	var b strings.Builder
	for _, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			litPattern(&b, p.Value)
		case *syntax.SglQuoted:
			if p.Dollar && strings.ContainsRune(p.Value, '\\') {
				b.WriteByte(anyString)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); ok {
					var throwaway arg
					resolveDouble(&throwaway, &b, []syntax.WordPart{q})
				} else {
					b.WriteByte(anyString)
				}
			}
		default:
			b.WriteByte(anyString)
		}
	}
	return b.String()
}

// litPattern writes an unquoted literal as a pattern: backslash escapes
// are literal, *, ? and [...] are wildcards.
func litPattern(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
		case c == '*':
			if s := b.String(); s == "" || s[len(s)-1] == '/' {
				b.WriteByte(noDot)
			}
			b.WriteByte(anyName)
		case c == '?':
			b.WriteByte(anyByte)
		case c == '[' && strings.IndexByte(v[i+1:], ']') >= 0:
			b.WriteByte(anyByte)
			i += 1 + strings.IndexByte(v[i+1:], ']')
		default:
			b.WriteByte(c)
		}
	}
}

// globToPattern reads a glob (a config entry, or a word whose quoting is
// no longer known) as a pattern.
func globToPattern(g string) string {
	var b strings.Builder
	litPattern(&b, g)
	return b.String()
}

// overlap reports whether some string matches both patterns: the
// product of the two patterns' automata, searched breadth first. Both
// patterns are at most a few hundred bytes, so the search is small.
func overlap(a, b string) bool {
	seen := map[state]bool{}
	queue := []state{{0, 0}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		if s.i == len(a) && s.j == len(b) {
			return true
		}
		queue = append(queue, overlapSteps(a, b, s.i, s.j)...)
	}
	return false
}

// overlapSteps are the states reachable from (i, j) by skipping an empty
// run or by reading one byte both patterns accept. A noDot is followed
// by its anyName: skipping it skips both; reading a byte moves onto the
// anyName.
func overlapSteps(a, b string, i, j int) []state {
	var out []state
	if i < len(a) {
		out = append(out, skips(a[i], state{i + 1, j}, state{i + 2, j})...)
	}
	if j < len(b) {
		out = append(out, skips(b[j], state{i, j + 1}, state{i, j + 2})...)
	}
	if i >= len(a) || j >= len(b) {
		return out
	}
	ca, cb := a[i], b[j]
	if !byteInBoth(ca, cb) {
		return out
	}
	next := state{i + 1, j + 1}
	if isRun(ca) {
		next.i = i // a run reads on
	}
	if isRun(cb) {
		next.j = j
	}
	if next != (state{i, j}) {
		out = append(out, next)
	}
	return out
}

// skips are the empty moves from a pattern byte: past a run, or past a
// noDot and its anyName.
func skips(c byte, pastRun, pastNoDot state) []state {
	switch c {
	case anyString, anyName:
		return []state{pastRun}
	case noDot:
		return []state{pastNoDot}
	}
	return nil
}

func isRun(c byte) bool { return c == anyString || c == anyName }

// excluded are the bytes a wildcard does not read; ok is false for a
// literal byte.
func excluded(c byte) (string, bool) {
	switch c {
	case anyString, anyByte:
		return "", true
	case anyName:
		return "/", true
	case noDot:
		return "./", true
	}
	return "", false
}

// byteInBoth reports whether some byte is read by both pattern bytes.
func byteInBoth(ca, cb byte) bool {
	xa, wa := excluded(ca)
	xb, wb := excluded(cb)
	switch {
	case wa && wb:
		return true
	case wa:
		return strings.IndexByte(xa, cb) < 0
	case wb:
		return strings.IndexByte(xb, ca) < 0
	}
	return ca == cb
}

// state is a position in each of two patterns.
type state struct{ i, j int }

// hasWildcard reports whether a pattern is not one plain string.
func hasWildcard(p string) bool {
	return strings.ContainsAny(p, string([]byte{anyString, anyByte, anyName, noDot}))
}

// onlyGlob reports whether a pattern is nothing but a glob's wildcards
// (dir/* names every file there, but no file in particular).
func onlyGlob(p string) bool {
	return p != "" && strings.Trim(p, string([]byte{anyName, anyByte, noDot})) == ""
}
