package policy

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one shell word as the classifier sees it.
type arg struct {
	src string // as written
	// val is the word after quote removal; meaningful when static.
	val string
	// dynamic names what the shell computes at run time in this word
	// ("a variable", "a command substitution", …); empty when the word's
	// value is known now.
	dynamic string
	// glob is set when val has unquoted pattern characters: the shell
	// replaces the word by matching file names.
	glob bool
	// procSubst marks a word that is one process substitution.
	procSubst bool
	// pat is the word as a wildcard pattern (see wildcard.go): what it
	// may stand for once the shell has expanded it. Set by resolveWord;
	// pattern() derives it for words made up elsewhere.
	pat string
}

// pattern is what the word may expand to, as a wildcard pattern: its
// value when static, computed parts and globs as wildcards.
func (a arg) pattern() string {
	switch {
	case a.pat != "":
		return a.pat
	case a.dynamic != "":
		return string(anyString)
	case a.glob:
		return globToPattern(a.val)
	}
	return a.val
}

// static reports whether the word's value is known before it runs,
// without globbing.
func (a arg) static() bool { return a.dynamic == "" && !a.glob }

// mayBeOption reports whether the word could be, or could expand to, a
// word starting with "-": a dynamic word could; a glob could unless it
// starts with a literal character other than "-".
func (a arg) mayBeOption() bool {
	switch {
	case a.dynamic != "":
		return true
	case a.glob:
		return a.val == "" || strings.ContainsRune("-*?[", rune(a.val[0]))
	}
	return strings.HasPrefix(a.val, "-")
}

// couldBe reports whether the word is, or could expand to, s.
func (a arg) couldBe(s string) bool {
	switch {
	case a.dynamic != "":
		return true
	case a.glob:
		ok, err := path.Match(a.val, s)
		return ok || err != nil
	}
	return a.val == s
}

// show is the word for display: its value when static, else the source.
func (a arg) show() string {
	if a.dynamic == "" && !a.procSubst {
		return a.val
	}
	return a.src
}

// resolveWord removes quotes from a parsed word. It never expands
// anything: parameters, substitutions, arithmetic, brace lists and
// ANSI-C strings make the word dynamic.
func resolveWord(w *syntax.Word, src string) arg {
	a := arg{src: sourceOf(w, src)}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			glob := unquoteLit(&b, p.Value)
			a.glob = a.glob || glob
		case *syntax.SglQuoted:
			if p.Dollar && strings.ContainsRune(p.Value, '\\') {
				a.setDynamic("ANSI-C quoting ($'…')")
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				a.setDynamic("a translated string ($\"…\")")
			}
			resolveDouble(&a, &b, p.Parts)
		default:
			a.setDynamic(partKind(part))
		}
	}
	a.val = b.String()
	a.pat = wordPattern(w)
	if _, ok := w.Parts[0].(*syntax.ProcSubst); ok && len(w.Parts) == 1 {
		// <(…) and >(…) become a /dev/fd path: never an option.
		a.dynamic, a.val, a.procSubst, a.pat = "", "/dev/fd/63", true, "/dev/fd/63"
	}
	if hasBraceList(w) {
		a.setDynamic("a brace expansion")
	}
	return a
}

func (a *arg) setDynamic(kind string) {
	if a.dynamic == "" {
		a.dynamic = kind
	}
}

// resolveDouble handles the parts of a double-quoted string.
func resolveDouble(a *arg, b *strings.Builder, parts []syntax.WordPart) {
	for _, part := range parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			a.setDynamic(partKind(part))
			continue
		}
		v := lit.Value
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
				i++
				if v[i] == '\n' {
					continue
				}
			}
			b.WriteByte(v[i])
		}
	}
}

// unquoteLit writes an unquoted literal without its backslashes and
// reports whether it holds pattern characters. A leading "~" stays as is.
func unquoteLit(b *strings.Builder, v string) (glob bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		case c == '*' || c == '?' || (c == '[' && strings.IndexByte(v[i+1:], ']') >= 0):
			glob = true
		}
		b.WriteByte(c)
	}
	return glob
}

// partKind names a word part that makes a word dynamic.
func partKind(p syntax.WordPart) string {
	switch p.(type) {
	case *syntax.ParamExp:
		return "a variable"
	case *syntax.CmdSubst:
		return "a command substitution"
	case *syntax.ArithmExp:
		return "an arithmetic expansion"
	case *syntax.ProcSubst:
		return "a process substitution"
	case *syntax.ExtGlob:
		return "an extended glob"
	case *syntax.BraceExp:
		return "a brace expansion"
	}
	return "syntax the classifier does not know"
}

// hasBraceList reports whether bash would brace-expand the word; the
// parsed tree is left untouched.
func hasBraceList(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(cp) {
		return false
	}
	return slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

// sourceOf is the word's text in the source it was parsed from.
func sourceOf(n syntax.Node, src string) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(src) || s > e {
		return ""
	}
	return src[s:e]
}

// loopValues returns a for loop's variable and its values when each is
// known now: the loop lists its words (no computed word, no brace list),
// and nothing in its body can give the variable another value (an
// assignment, ${v:=…}, or the bare name as a word, as read, printf -v,
// mapfile and declare take it). A word that is a glob stays one: the
// values are the files it matches.
func loopValues(c *syntax.ForClause, src string) (string, []arg, bool) {
	it, ok := c.Loop.(*syntax.WordIter)
	if !ok || it.Name == nil || !it.InPos.IsValid() {
		return "", nil, false
	}
	name := it.Name.Value
	values := make([]arg, len(it.Items))
	for i, word := range it.Items {
		if values[i] = resolveWord(word, src); values[i].dynamic != "" {
			return "", nil, false
		}
	}
	return name, values, !mayAssign(c.Do, name)
}

// mayAssign reports whether any of stmts may set the variable name.
func mayAssign(stmts []*syntax.Stmt, name string) bool {
	found := false
	params := map[*syntax.Lit]bool{} // the names of expansions: reads, not words
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				found = found || (n.Name != nil && n.Name.Value == name)
			case *syntax.ParamExp:
				params[n.Param] = true
				found = found || (n.Param != nil && n.Param.Value == name && (n.Exp != nil || n.Excl || n.Index != nil))
			case *syntax.WordIter:
				found = found || (n.Name != nil && n.Name.Value == name)
			case *syntax.Lit:
				if params[n] {
					return true
				}
				v := strings.TrimLeft(n.Value, "-")
				found = found || strings.HasPrefix(v, name) && (len(v) == len(name) || strings.ContainsRune("=[+", rune(v[len(name)])))
			}
			return !found
		})
	}
	return found
}

// inputFrom judges an input redirection from word: one value at a time
// when the word is only a loop variable whose values are known, as a
// file named at run time otherwise.
func (w *walker) inputFrom(word *syntax.Word, a arg) {
	if values, ok := w.loopVars[onlyVariable(word)]; ok {
		for _, v := range values {
			w.inputFile(v)
		}
		return
	}
	w.inputFile(a)
}

// onlyVariable is the name of the variable a word consists of ($v,
// ${v}, "$v"); empty for any other word.
func onlyVariable(word *syntax.Word) string {
	parts := word.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok && !dq.Dollar {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return ""
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Names != 0 || pe.Exp != nil {
		return ""
	}
	return pe.Param.Value
}
