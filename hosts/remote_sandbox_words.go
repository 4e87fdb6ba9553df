package hosts

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What the scan looks at (remote_sandbox_scan.go): the words of a command
// that may name a file or directory it reads the contents of. A program
// that only reads metadata (metadataOnly) reads no file under the
// directories it names, so its words need no scan: `df -P /` costs
// nothing. Content readers that take their paths only from their own
// words (filters) have those words checked. Anything else (an unknown
// program, a command or parameter substitution, a loop) may open paths
// it finds in data, so then every word of the line, whatever program it
// belongs to, is scanned. The working directory is scanned only when the
// command can read it by its words (remote_sandbox_cwd.go): a big one
// (a home full of caches) costs seconds, and `docker ps` or `echo $PATH`
// read nothing of it.

// metadataOnly are programs that read no file contents under the paths
// they are given: disk, mount and process tables, file attributes,
// names. ls and du list names, so a line that may turn names into opened
// paths (deriving) scans their directories all the same.
var metadataOnly = map[string]bool{
	"df": true, "du": true, "ls": true, "stat": true, "findmnt": true, "lsblk": true, "mount": true,
	"uptime": true, "free": true, "ps": true, "uname": true, "hostname": true, "id": true, "whoami": true,
	"date": true, "nproc": true, "lscpu": true, "vmstat": true, "iostat": true, "w": true, "who": true,
	"pgrep": true, "pidof": true, "ip": true, "ss": true, "systemctl": true, "journalctl": true,
	"dmesg": true, "echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true,
	"sleep": true, "readlink": true, "realpath": true, "basename": true, "dirname": true,
}

// filters read the contents of the files their own words name (and
// stdin), and open no path found in what they read.
var filters = map[string]bool{
	"cat": true, "head": true, "tail": true, "sort": true, "uniq": true, "wc": true, "cut": true,
	"tr": true, "column": true, "tee": true, "nl": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "jq": true, "md5sum": true, "sha256sum": true, "base64": true, "od": true, "strings": true,
}

// recursive are the filters that read a directory's tree when given none.
// One of these has the working directory scanned whatever its words; a
// recursive grep only when it is given no path (grepReadsHere).
var recursive = map[string]bool{"rg": true, "ag": true, "ack": true}

// wrappers run the next word as the program; their options are skipped.
var wrappers = map[string]bool{"nice": true, "nohup": true, "command": true, "exec": true, "timeout": true, "env": true}

// maxScanWords bounds the words checked on the host.
const maxScanWords = 256

// scanWords are the words of command whose paths (the host expands their
// wildcards) the scan checks; whether the working directory is scanned
// too; and near, the relative words that, when one exists there, have
// the working directory scanned (a program that opens one file there may
// open its neighbours). A command that does not parse is scanned word by
// word.
func scanWords(command string) (words []string, cwd bool, near []string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return splitWords(command), true, nil
	}
	var l lineWords
	syntax.Walk(f, l.visit)
	if !l.deriving {
		return capWords(l.filtered), l.cwd, nil
	}
	words = capWords(append(l.filtered, l.meta...))
	if l.cwd || l.lists || namesHere(words) {
		return words, true, nil
	}
	return words, false, nearWords(words)
}

// lineWords collects scanWords' findings over one command line.
type lineWords struct {
	filtered []string // words of filters and unknown programs
	meta     []string // words of metadataOnly programs
	deriving bool
	cwd      bool // a program reads the working directory's tree
	lists    bool // a lister (ls, du) names the working directory's entries
}

func (l *lineWords) visit(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.CallExpr:
		l.assigns(x.Assigns)
		l.call(x.Args)
	case *syntax.DeclClause: // export T=/srv/app
		l.assigns(x.Args)
	case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp:
		l.deriving = true
	case *syntax.ForClause:
		l.deriving = true
		if it, ok := x.Loop.(*syntax.WordIter); ok { // for f in /srv/app/*/*
			l.words(it.Items)
		}
	case *syntax.WhileClause:
		l.deriving = true
	case *syntax.Redirect:
		if w, ok := litWord(x.Word); ok {
			l.filtered = append(l.filtered, w)
		}
	}
	return true
}

// assigns collects the values of variable assignments: a later $d may
// name them (d=/srv/app; grep -r x $d).
func (l *lineWords) assigns(as []*syntax.Assign) {
	for _, a := range as {
		if a.Value != nil {
			l.words([]*syntax.Word{a.Value})
		}
	}
}

// words collects words that may be paths of any program of the line.
func (l *lineWords) words(ws []*syntax.Word) {
	for _, w := range ws {
		if lit, ok := litWord(w); ok {
			l.filtered = append(l.filtered, subWords(lit)...)
		}
	}
}

// call classifies one simple command's words (args[0] the program).
func (l *lineWords) call(args []*syntax.Word) {
	var lits []string
	for _, a := range args {
		w, ok := litWord(a)
		if !ok {
			l.deriving = true
			continue
		}
		lits = append(lits, w)
	}
	l.classify(lits)
}

// classify collects one program's words (lits[0] the program).
func (l *lineWords) classify(lits []string) {
	lits = unwrap(lits)
	if len(lits) == 0 {
		return
	}
	prog, rest := path.Base(lits[0]), lits[1:]
	switch {
	case metadataOnly[prog]:
		l.meta = append(l.meta, rest...)
		l.lists = l.lists || listsHere(prog, rest)
		return
	case isAwk(prog):
		l.deriving = l.deriving || !safeAwk(rest)
	case filters[prog]:
		l.cwd = l.cwd || recursive[prog] || recursiveGrep(prog, rest) && grepReadsHere(rest)
	default:
		l.deriving = true
		l.runner(lits[0], rest)
	}
	for _, w := range rest {
		l.filtered = append(l.filtered, subWords(w)...)
		if strings.Contains(w, "files0-from") || strings.Contains(w, "files-from") {
			l.deriving = true
		}
	}
}

// unwrap drops wrapper programs (env, nice, timeout…) and their options
// from the front of a simple command's words.
func unwrap(lits []string) []string {
	for len(lits) > 0 && wrappers[path.Base(lits[0])] {
		w := path.Base(lits[0])
		lits = lits[1:]
		for len(lits) > 0 && (strings.HasPrefix(lits[0], "-") || w == "env" && strings.Contains(lits[0], "=")) {
			lits = lits[1:]
		}
		if w == "timeout" && len(lits) > 0 {
			lits = lits[1:] // the duration
		}
	}
	return lits
}

func isAwk(prog string) bool {
	return prog == "awk" || prog == "gawk" || prog == "mawk" || prog == "nawk"
}

// safeAwk says whether awk with these words opens only the files named:
// a program on the command line that neither reads with getline, runs a
// command (system, a pipe) nor includes a file.
func safeAwk(rest []string) bool {
	for _, w := range rest {
		if w == "-f" || strings.HasPrefix(w, "--file") || strings.HasPrefix(w, "--include") || w == "-i" || w == "-E" {
			return false
		}
		if strings.Contains(w, "getline") || strings.Contains(w, "system") || strings.ContainsAny(w, "|@") {
			return false
		}
	}
	return true
}

// recursiveGrep says whether grep reads directories' trees here.
func recursiveGrep(prog string, rest []string) bool {
	if !strings.HasSuffix(prog, "grep") {
		return false
	}
	for _, w := range rest {
		if w == "--recursive" || w == "--dereference-recursive" || strings.HasPrefix(w, "-d") && strings.Contains(w, "recurse") ||
			strings.HasPrefix(w, "--directories=recurse") || len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w, "rR") {
			return true
		}
	}
	return false
}

// litWord is w as a glob pattern for the host's sh (see globWord): its
// unquoted wildcards stay wildcards, quoted text is literal; false when
// it expands a parameter, a command or arithmetic.
func litWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(x.Value))
		case *syntax.SglQuoted:
			b.WriteString(escapeGlob(x.Value))
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(escapeGlob(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of an unquoted word (\  is a space).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			b.WriteString(escapeGlob(s[i : i+1]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escapeGlob makes s's wildcard characters (and backslashes) literal in
// a pattern: each is escaped with a backslash (see shellWord).
func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// subWords are w and the parts of it that may name a path too: after an
// '=' (--dir=/srv), and the pieces of a script held in one word (an awk
// program, bash -c '…').
func subWords(w string) []string {
	out := []string{w}
	if _, v, ok := strings.Cut(w, "="); ok && v != "" {
		out = append(out, v)
	}
	if strings.ContainsAny(w, " \t\n;|&<>()'\"") {
		// A script's words are the script's shell's to expand: its
		// wildcards (quoted here) are wildcards there (sh -c 'cat /srv/*').
		for _, p := range splitWords(w) {
			out = append(out, unquoteGlob.Replace(p))
		}
	}
	return out
}

// unquoteGlob undoes escapeGlob.
var unquoteGlob = strings.NewReplacer(`\\`, `\`, `\*`, "*", `\?`, "?", `\[`, "[")

// splitWords splits text at blanks, quotes and shell operators.
func splitWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";|&<>()$`'\"=,{}", r)
	})
}

// capWords drops duplicates and empty words, keeping maxScanWords.
func capWords(words []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if w != "" && !seen[w] && len(out) < maxScanWords {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
