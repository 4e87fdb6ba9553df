package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// heredoc returns a here-document's text as the command reading it gets
// it, when that is known now. Under an unquoted delimiter the shell
// expands the body: parameters and command substitutions make it
// computed (those substitutions run in the outer shell and are walked as
// commands there), and a backslash before $, ` or \ is removed, so
// "echo \`id\`" reaches the reader as "echo `id`". Under <<- the shell
// strips the tabs that start each line.
func heredoc(r *syntax.Redirect) (stdinKind, string) {
	if r.Hdoc == nil {
		return stdinText, ""
	}
	quoted := delimiterQuoted(r.Word)
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return stdinFile, ""
		}
		if quoted {
			b.WriteString(lit.Value)
		} else {
			b.WriteString(unescapeHeredoc(lit.Value))
		}
	}
	text := b.String()
	if r.Op == syntax.DashHdoc {
		text = stripTabs(text)
	}
	return stdinText, text
}

// delimiterQuoted reports whether any part of a here-document's
// delimiter is quoted, which keeps the body from being expanded.
func delimiterQuoted(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// unescapeHeredoc removes the backslashes the shell removes from an
// unquoted here-document: before $, ` and \ (the parser has already
// joined backslash-newlines).
func unescapeHeredoc(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\\", v[i+1]) >= 0 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// stripTabs removes the tabs that start each line, as <<- does.
func stripTabs(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}

// scriptLines reports whether a program read from standard input spans
// more than one line: the shell reads such a program a line at a time
// from the same input its commands read, so a command that reads its
// input (read, cat, head) takes the next lines as data and the shell
// goes on with whatever follows — not the program the classifier read.
func scriptLines(text string) bool {
	return strings.Contains(strings.TrimSuffix(text, "\n"), "\n")
}

// setsInput reports whether redirections give a command its standard
// input.
func setsInput(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrIn, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrInOut:
			if r.N == nil || r.N.Value == "0" {
				return true
			}
		}
	}
	return false
}
