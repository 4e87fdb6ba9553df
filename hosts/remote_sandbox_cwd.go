package hosts

import (
	"path"
	"slices"
	"strings"
)

// When the scan covers the working directory (scanWords): only when the
// command can read it by its words. A recursive reader given no
// directory (grep -r x, rg, ag, ack, git grep, find with no path, a
// script of python -c), wherever it appears (xargs grep -r, sh -c
// 'grep -r x'); and, on a line that may open paths found in data, a word
// that is ".", "./…" or a relative wildcard, a lister of it (ls, du with
// no path), or a relative word that exists there (near: `while read f;
// do cat "$f"; done < list`). A word that is not a path (docker ps, curl
// URL) or a variable from the environment (echo $PATH) scans nothing:
// the sandbox masks the bare names at the top of the working directory,
// in the homes and their .ssh whatever the command.

// shells run the script after -c with their own expansion.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "busybox": true}

// interpreters run inline code (-c, -e, -r) that may walk any tree.
var interpreters = map[string]bool{"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true}

// maxNearWords bounds the relative words checked on the host.
const maxNearWords = 64

// runner classifies an unknown program's words (prog its path): a
// recursive reader, a shell's script, inline code, or a program that
// runs the next known program of its words (xargs grep -r, sudo cat,
// find -exec grep -r).
func (l *lineWords) runner(prog string, rest []string) {
	if strings.Contains(prog, "/") {
		l.filtered = append(l.filtered, prog) // ./deploy.sh
	}
	base := path.Base(prog)
	switch {
	case recursive[base]:
		l.cwd = true
	case base == "find":
		l.cwd = l.cwd || len(rest) == 0 || rest[0] == "" || strings.ContainsRune("-(!", rune(rest[0][0]))
	case base == "git":
		l.cwd = l.cwd || slices.Contains(rest, "grep")
	case interpreters[strings.TrimRight(base, "0123456789.")]:
		l.cwd = l.cwd || slices.ContainsFunc(rest, inlineCode)
	case shells[base]:
		l.script(rest)
	}
	for i, w := range rest {
		if known(path.Base(w)) {
			l.classify(rest[i:])
			return
		}
	}
}

// known are the programs runner looks for in another's words.
func known(prog string) bool {
	return filters[prog] || recursive[prog] || shells[prog] || interpreters[prog] || isAwk(prog) || prog == "find" || prog == "git"
}

// inlineCode says whether an interpreter's word gives it code to run.
func inlineCode(w string) bool {
	return w == "-c" || w == "-e" || w == "-E" || w == "-r" || w == "--eval"
}

// script scans a shell's -c script as a command line of its own.
func (l *lineWords) script(rest []string) {
	for i, w := range rest {
		if len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.Contains(w, "c") && i+1 < len(rest) {
			words, cwd, near := scanWords(unquoteGlob.Replace(rest[i+1]))
			l.filtered = append(append(l.filtered, words...), near...)
			l.cwd = l.cwd || cwd
			return
		}
	}
}

// listsHere says whether a metadata program lists the working directory's
// entries: ls or du (or tree) with no path.
func listsHere(prog string, rest []string) bool {
	if prog != "ls" && prog != "du" && prog != "tree" {
		return false
	}
	for _, w := range rest {
		if !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// namesHere says whether a word names the working directory or entries
// of it: ".", "./…", or a relative pattern with a wildcard.
func namesHere(words []string) bool {
	for _, w := range words {
		if w == "." || strings.HasPrefix(w, "./") || !strings.HasPrefix(w, "/") && hasWildcard(w) {
			return true
		}
	}
	return false
}

// nearWords are the relative words that may name a file in the working
// directory (options and absolute paths are not), at most maxNearWords.
func nearWords(words []string) []string {
	var near []string
	for _, w := range words {
		if w != "" && !strings.HasPrefix(w, "/") && !strings.HasPrefix(w, "-") && len(near) < maxNearWords {
			near = append(near, w)
		}
	}
	return near
}

// hasWildcard says whether a pattern of scanWords has an unescaped *, ?
// or [.
func hasWildcard(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// grepValued are grep's options whose value is the next word (when not
// joined to the option): short ones as letters, long ones whole.
const grepValued = "efABCmdDX"

var grepValuedLong = map[string]bool{"--regexp": true, "--file": true, "--after-context": true, "--before-context": true,
	"--context": true, "--max-count": true, "--directories": true, "--devices": true, "--include": true, "--exclude": true,
	"--exclude-dir": true, "--exclude-from": true, "--label": true, "--binary-files": true, "--group-separator": true}

// grepReadsHere says whether grep with these words is given no path, so
// a recursive one reads the working directory: its words less options,
// their values and the pattern (unless -e or -f gives it) are its paths.
func grepReadsHere(rest []string) bool {
	operands, pattern := 0, false
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "--":
			operands += len(rest) - i - 1
			i = len(rest)
		case strings.HasPrefix(w, "--"):
			name, _, joined := strings.Cut(w, "=")
			pattern = pattern || name == "--regexp" || name == "--file"
			if grepValuedLong[name] && !joined {
				i++
			}
		case len(w) > 1 && w[0] == '-':
			for j := 1; j < len(w); j++ {
				if strings.IndexByte(grepValued, w[j]) >= 0 {
					pattern = pattern || w[j] == 'e' || w[j] == 'f'
					if j == len(w)-1 {
						i++
					}
					break
				}
			}
		default:
			operands++
		}
	}
	if !pattern {
		operands--
	}
	return operands <= 0
}
