package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deep shell strings nest (sh -c "sh -c '…'").
const maxDepth = 6

// walker classifies every simple command of a command line.
type walker struct {
	policy  *Policy
	target  Target
	verdict verdict
	cmds    []Command
	// fdAlias is set when some redirection may leave a descriptor open on
	// a file (an input redirection on a descriptor other than 0, <>, a
	// duplicated input or an output duplicated from another than 1 or 2):
	// then /dev/stdout, /dev/stderr and /dev/fd/N may name that file, and
	// opening them for writing writes it.
	fdAlias bool
	// cwds are the directories cd commands in the command line go to
	// (cwdUnknown for one not known now): relative paths are judged
	// there too.
	cwds []string
	// bashScripts are the scripts read in bash's dialect (the line, and
	// strings and here-documents handed to bash), for confirmWithBash.
	bashScripts []string
	// loopVars are the variables of the for loops being walked whose
	// values are known now (see loopValues).
	loopVars map[string][]arg
}

// stdinKind is where a command's standard input comes from, which
// matters for a shell or interpreter that would read its program there.
type stdinKind int

const (
	stdinNone stdinKind = iota // the runner's empty input
	stdinPipe                  // another command's output
	stdinText                  // a here-string or heredoc known now
	stdinFile                  // a file or a computed here-document
)

// ShellDialect is the dialect a command line is parsed in: that of the
// shell that runs it, bash (hosts.RunnerShell runs every command with
// `bash -c`, on SSH hosts and locally). Parsing in any other dialect than
// the runner's is a bypass: text one shell reads inside quotes another
// runs as commands.
const ShellDialect = syntax.LangBash

// A shell string handed to another shell is parsed in that shell's
// dialect; sh is dash on Debian and Ubuntu but bash on Red Hat, so a
// string for sh is read both ways.
var (
	bashOnly  = []syntax.LangVariant{syntax.LangBash}
	posixOnly = []syntax.LangVariant{syntax.LangPOSIX}
	shEither  = []syntax.LangVariant{syntax.LangBash, syntax.LangPOSIX}
)

// scope is what an enclosing construct passes down.
type scope struct {
	src   string   // the text being walked, for source positions
	via   []string // wrappers and shells around the command
	stdin stdinKind
	text  string // the input when stdin is stdinText, the file when stdinFile
	depth int
	// sharedInput marks standard input set up for a compound command:
	// several commands may read it, each taking a part.
	sharedInput bool
	// dialects are how the shell running a script string may read it
	// (nil: ShellDialect); each reading is classified.
	dialects []syntax.LangVariant
}

func (s scope) inside(label string) scope {
	s.via = append(slices.Clip(s.via), label)
	return s
}

// deeper is the scope of a shell string run by label, a shell reading
// it in dialects: one level deeper, with the same standard input.
func (s scope) deeper(label string, dialects []syntax.LangVariant) scope {
	s = s.inside(label)
	s.depth++
	s.dialects = dialects
	return s
}

// script parses src in each dialect the shell running it may use and
// classifies every reading; sc gives the wrappers around it, its depth and
// its standard input. The first dialect's reading is the one recorded;
// another reading that finds other commands adds its own verdict and
// needs approval, as the command means different things on different
// hosts.
func (w *walker) script(src string, sc scope) {
	if sc.depth > maxDepth {
		w.verdict.add(Approve, "shell strings nest too deep to classify")
		return
	}
	dialects := sc.dialects
	if len(dialects) == 0 {
		dialects = []syntax.LangVariant{ShellDialect}
	}
	if slices.Contains(dialects, syntax.LangBash) {
		w.bashScripts = append(w.bashScripts, src)
	}
	start := len(w.cmds)
	w.parseAndWalk(src, sc, dialects[0])
	for _, d := range dialects[1:] {
		alt := &walker{policy: w.policy, target: w.target, fdAlias: w.fdAlias, cwds: w.cwds}
		alt.parseAndWalk(src, sc, d)
		differs := !sameCommands(alt.cmds, w.cmds[start:])
		if differs {
			w.verdict.add(Approve, fmt.Sprintf("a shell reading it as %s runs other commands than %s does: the command means different things on different hosts", d, dialects[0]))
		}
		for _, r := range alt.verdict.reasons {
			if differs || r.action > Allow {
				w.verdict.add(r.action, r.text)
			}
		}
	}
}

// sameCommands reports whether two readings found the same commands.
func sameCommands(a, b []Command) bool {
	return slices.EqualFunc(a, b, func(x, y Command) bool {
		return x.Program == y.Program && slices.Equal(x.Argv, y.Argv) && x.Action == y.Action
	})
}

// parseAndWalk parses src in one dialect and classifies it.
func (w *walker) parseAndWalk(src string, sc scope, dialect syntax.LangVariant) {
	f, src, err := parseShell(src, dialect)
	if err != nil {
		w.verdict.add(Approve, fmt.Sprintf("does not parse as a %s command: %v", dialect, err))
		return
	}
	visited := map[*syntax.CallExpr]bool{}
	sc.src = src
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && mayAliasFile(r) {
			w.fdAlias = true
		}
		return true
	})
	w.noteDirChanges(f, src)
	w.stmts(f.Stmts, sc, visited)
	// Safety net: any simple command the walk above did not reach means
	// the classifier missed a construct, so the command is not allowed.
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && !visited[c] {
			w.verdict.add(Approve, "part of the command was not understood by the classifier")
		}
		return true
	})
}

// parseShell parses src in dialect as the shell does. The parser takes a
// backslash-newline inside a comment as a line continuation, so that the
// next line joins the comment's command; bash ends a comment at the
// newline whatever comes before it. Each such backslash is read as the
// space it is to bash (same length: positions stay right), and the text
// parsed again, as the next line may hold another comment. (Inside
// backquotes bash removes the backslash-newline before parsing, so there
// the comment goes on; reading the next line as a command is the
// stricter of the two, and confirmWithBash finds the difference.)
func parseShell(src string, dialect syntax.LangVariant) (*syntax.File, string, error) {
	for {
		f, err := syntax.NewParser(syntax.Variant(dialect), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
		if err != nil {
			return nil, src, err
		}
		fixed := src
		syntax.Walk(f, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.Comment); ok {
				fixed = endComment(fixed, c)
			}
			return true
		})
		if fixed == src {
			return f, src, nil
		}
		src = fixed
	}
}

// endComment blanks the backslash of a backslash-newline the parser
// took into comment c.
func endComment(src string, c *syntax.Comment) string {
	s, e := int(c.Pos().Offset()), int(c.End().Offset())
	if s < 0 || e > len(src) || s > e {
		return src
	}
	i := strings.Index(src[s:e], "\\\n")
	if i < 0 {
		return src
	}
	return src[:s+i] + " " + src[s+i+1:]
}

func (w *walker) stmts(list []*syntax.Stmt, sc scope, vis map[*syntax.CallExpr]bool) {
	for _, s := range list {
		w.stmt(s, sc, vis)
	}
}

func (w *walker) stmt(s *syntax.Stmt, sc scope, vis map[*syntax.CallExpr]bool) {
	if len(s.Redirs) > 0 && runsExec(s.Cmd, sc.src) {
		w.verdict.add(Approve, "exec with redirections opens descriptors for every later command")
	}
	if s.Background {
		w.verdict.add(Approve, backgroundWhy("&", "runs the command in the background"))
	}
	sc = w.redirects(s.Redirs, sc, vis)
	if setsInput(s.Redirs) {
		sc.sharedInput = false
	}
	if _, simple := s.Cmd.(*syntax.CallExpr); !simple {
		sc.sharedInput = true
	}
	w.command(s.Cmd, sc, vis)
}

// command dispatches on the kind of command.
func (w *walker) command(c syntax.Command, sc scope, vis map[*syntax.CallExpr]bool) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		vis[c] = true
		w.call(c, sc, vis)
	case *syntax.BinaryCmd:
		w.stmt(c.X, sc, vis)
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			sc.stdin, sc.text = stdinPipe, ""
		}
		w.stmt(c.Y, sc, vis)
	case *syntax.Block:
		w.stmts(c.Stmts, sc, vis)
	case *syntax.Subshell:
		w.stmts(c.Stmts, sc, vis)
	case *syntax.IfClause:
		w.ifClause(c, sc, vis)
	case *syntax.WhileClause:
		w.stmts(c.Cond, sc, vis)
		w.stmts(c.Do, sc, vis)
	case *syntax.ForClause:
		w.forClause(c, sc, vis)
	case *syntax.CaseClause:
		w.words(sc, vis, c.Word)
		for _, it := range c.Items {
			w.words(sc, vis, it.Patterns...)
			w.stmts(it.Stmts, sc, vis)
		}
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt, sc.inside("time"), vis)
		}
	case *syntax.TestClause:
		w.testExpr(c.X, sc, vis)
	default:
		w.otherCommand(c, sc, vis)
	}
}

// otherCommand handles constructs that are never needed to read state and
// that can change how later commands run; what they contain is still
// walked so that a deny inside is found.
func (w *walker) otherCommand(c syntax.Command, sc scope, vis map[*syntax.CallExpr]bool) {
	switch c := c.(type) {
	case *syntax.FuncDecl:
		w.verdict.add(Approve, "defines a shell function")
		w.stmt(c.Body, sc, vis)
		return
	case *syntax.CoprocClause:
		w.verdict.add(Approve, backgroundWhy("coproc", "starts a coprocess"))
		w.stmt(c.Stmt, sc, vis)
		return
	case *syntax.DeclClause:
		w.verdict.add(Approve, fmt.Sprintf("%s changes shell variables for later commands", c.Variant.Value))
	case *syntax.LetClause, *syntax.ArithmCmd:
		w.verdict.add(Approve, "arithmetic evaluation can run code hidden in variables")
	default:
		w.verdict.add(Approve, fmt.Sprintf("%T is syntax the classifier does not handle", c))
	}
	w.nested(c, sc, vis)
}

func (w *walker) ifClause(c *syntax.IfClause, sc scope, vis map[*syntax.CallExpr]bool) {
	for ; c != nil; c = c.Else {
		w.stmts(c.Cond, sc, vis)
		w.stmts(c.Then, sc, vis)
	}
}

func (w *walker) forClause(c *syntax.ForClause, sc scope, vis map[*syntax.CallExpr]bool) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		w.words(sc, vis, l.Items...)
		if l.Name != nil && envLike(l.Name.Value) {
			w.verdict.add(Approve, fmt.Sprintf("the loop sets %s, which can change how later commands run", l.Name.Value))
		}
	default:
		w.verdict.add(Approve, "arithmetic evaluation can run code hidden in variables")
		w.nested(l, sc, vis)
	}
	name, values, ok := loopValues(c, sc.src)
	if !ok {
		w.stmts(c.Do, sc, vis)
		return
	}
	outer := w.loopVars
	w.loopVars = maps.Clone(outer)
	if w.loopVars == nil {
		w.loopVars = map[string][]arg{}
	}
	w.loopVars[name] = values
	w.stmts(c.Do, sc, vis)
	w.loopVars = outer
}

// testExpr walks a [[ … ]] expression; arithmetic comparisons evaluate
// their operands as expressions, which can run code hidden in a variable.
func (w *walker) testExpr(x syntax.TestExpr, sc scope, vis map[*syntax.CallExpr]bool) {
	syntax.Walk(x, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryTest); ok && b.Op >= syntax.TsEql && b.Op <= syntax.TsGtr {
			w.verdict.add(Approve, "arithmetic comparison in [[ ]] can run code hidden in variables")
		}
		if u, ok := n.(*syntax.UnaryTest); ok && (u.Op == syntax.TsVarSet || u.Op == syntax.TsRefVar) {
			w.verdict.add(Approve, "[[ -v ]] evaluates array subscripts, which can run code")
		}
		if word, ok := n.(*syntax.Word); ok {
			w.words(sc, vis, word)
			return false
		}
		return true
	})
}

// words walks words for the commands nested in them.
func (w *walker) words(sc scope, vis map[*syntax.CallExpr]bool, ws ...*syntax.Word) {
	for _, word := range ws {
		if word != nil {
			w.nested(word, sc, vis)
		}
	}
}

// nested finds what runs inside a node: command and process
// substitutions are classified like any command; arithmetic and indexed
// parameters are flagged.
func (w *walker) nested(n syntax.Node, sc scope, vis map[*syntax.CallExpr]bool) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			inner := sc.inside("$(…)")
			inner.stdin = stdinNone
			w.stmts(n.Stmts, inner, vis)
			return false
		case *syntax.ProcSubst:
			inner := sc.inside("<(…)")
			inner.stdin = stdinNone
			if n.Op == syntax.CmdOut {
				inner.via[len(inner.via)-1], inner.stdin = ">(…)", stdinPipe
			}
			w.stmts(n.Stmts, inner, vis)
			return false
		case *syntax.ArithmExp:
			w.verdict.add(Approve, "arithmetic expansion can run code hidden in variables")
		case *syntax.ParamExp:
			w.paramExp(n)
		case *syntax.ExtGlob:
			w.verdict.add(Approve, "extended globs are not classified (zsh glob qualifiers run code)")
		}
		return true
	})
}

// paramExp flags expansions that evaluate a variable's value as code:
// subscripts and slices are arithmetic, ${!x} follows a name that may
// carry a subscript, and ${x@P} expands the value like a prompt, command
// substitutions included.
func (w *walker) paramExp(n *syntax.ParamExp) {
	switch {
	case n.Index != nil || n.Slice != nil:
		w.verdict.add(Approve, "an indexed or sliced variable is evaluated as arithmetic")
	case n.Excl:
		w.verdict.add(Approve, "an indirect expansion (${!x}) can evaluate code hidden in a variable")
	case n.Exp != nil && n.Exp.Op == syntax.OtherParamOps:
		w.verdict.add(Approve, "a ${x@…} transformation can evaluate code hidden in a variable")
	}
}

// envLike reports whether a variable name looks like one that changes
// how programs run (PATH, IFS, LD_PRELOAD, PAGER, …): any upper-case name.
func envLike(name string) bool {
	return strings.ToLower(name) != name
}
