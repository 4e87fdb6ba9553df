package policy

import (
	"fmt"
	"slices"
	"strings"
)

// grepSpec reads GNU grep's options only to find recursion and which
// words are files; options it does not list are taken as flags.
var grepSpec = optSpec{lenient: true, short: "EFGPyivwxcLlHhnbsqZzUTaIrRo0123456789e:f:m:A:B:C:d:D:",
	long: []string{"regexp=", "file=", "max-count=", "after-context=", "before-context=", "context=", "directories=", "devices=",
		"recursive", "dereference-recursive", "include=", "exclude=", "exclude-dir=", "exclude-from=", "label=", "binary-files=", "color=?", "colour=?"}}

// recursiveRead adds to c when grep reads a directory tree that holds
// secrets: the root, a home or working directory, or a directory above a
// secret path (grep -r x /etc reaches /etc/shadow).
func (w *walker) recursiveRead(c *Command, args []arg) {
	switch c.Program {
	case "grep", "egrep", "fgrep", "rgrep", "zgrep":
	case "diff":
		w.recursiveDiff(c, args)
		return
	default:
		return
	}
	p := grepSpec.parse(args)
	recursive := c.Program == "rgrep" || p.has("r", "R", "recursive", "dereference-recursive")
	for _, o := range p.findAll("d", "directories") {
		recursive = recursive || strings.HasPrefix("recurse", o.value) && o.value != ""
	}
	if !recursive {
		return
	}
	files := p.operands
	if !p.has("e", "f", "regexp", "file") && len(files) > 0 {
		files = files[1:]
	}
	if len(files) == 0 {
		files = []arg{{src: ".", val: "."}}
	}
	for _, f := range files {
		if e := w.secretUnder(f); e != "" {
			c.add(Approve, fmt.Sprintf("%s -r reads everything under %s, which holds credentials (%s)", c.Program, f.show(), e))
			return
		}
	}
}

// recursiveDiff: diff -r prints the files of two trees where they differ.
func (w *walker) recursiveDiff(c *Command, args []arg) {
	p := optSpec{lenient: true}.parse(args)
	if !p.has("r", "recursive") {
		return
	}
	for _, f := range p.operands {
		if e := w.secretUnder(f); e != "" {
			c.add(Approve, fmt.Sprintf("diff -r reads everything under %s, which holds credentials (%s)", f.show(), e))
			return
		}
	}
}

// safeVars are variables printenv may show: none holds a credential.
var safeVars = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "LANG", "LANGUAGE", "TERM", "TZ", "HOSTNAME",
	"SHLVL", "MAIL", "EDITOR", "VISUAL", "PAGER", "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR",
	"COLUMNS", "LINES", "DISPLAY", "SSH_TTY", "SSH_CONNECTION", "SSH_CLIENT", "INVOCATION_ID", "JOURNAL_STREAM", "MANPATH"}

// checkPrintenv: printenv without names dumps the environment, and a
// name may be a credential (printenv OPENAI_API_KEY).
func checkPrintenv(args []arg) (Action, string) {
	if len(args) == 0 {
		return Approve, "printenv prints the whole environment, which holds credentials"
	}
	for _, a := range args {
		if !a.static() || !(slices.Contains(safeVars, a.val) || strings.HasPrefix(a.val, "LC_")) {
			return Approve, fmt.Sprintf("printenv %s may print a credential (only names such as PATH, HOME, LANG are read-only)", a.show())
		}
	}
	return Allow, "prints variables that hold no credentials"
}

// psValueOpts are ps options whose value is the next word when not
// attached.
const psValueOpts = "oOpqUuGgtCsN"

// checkPs refuses ps's BSD "e" (ps e, ps auxe, ps eww, ps eo args),
// which prints every process's environment after its command, and a
// format naming the environment (-o environ).
func checkPs(args []arg) (Action, string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static() {
			return Approve, fmt.Sprintf("the ps argument %s is computed at run time", a.src)
		}
		v, value := a.val, ""
		switch {
		case strings.HasPrefix(v, "--"):
			name, val, attached := strings.Cut(v, "=")
			if !attached && slices.Contains(psLongValueOpts, v) && i+1 < len(args) {
				i++
				val = args[i].val
			}
			if name == "--format" {
				value = val
			}
		case strings.HasPrefix(v, "-"):
			for j := 1; j < len(v); j++ {
				if strings.IndexByte(psValueOpts, v[j]) < 0 {
					continue
				}
				val := v[j+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i].val
				}
				if v[j] == 'o' || v[j] == 'O' {
					value = val
				}
				break
			}
		default:
			letters, val := v, ""
			if k := strings.IndexAny(v, psBSDValueOpts); k >= 0 {
				letters, val = v[:k], v[k+1:]
			}
			if strings.ContainsRune(letters, 'e') {
				return Approve, fmt.Sprintf("ps %s prints every process's environment, which holds credentials", v)
			}
			value = val
		}
		if strings.Contains(strings.ToLower(value), "env") {
			return Approve, fmt.Sprintf("ps %s shows processes' environments, which hold credentials", v)
		}
	}
	return Allow, ""
}

// psLongValueOpts are ps's long options whose value may be the next word.
var psLongValueOpts = []string{"--sort", "--format", "--pid", "--ppid", "--user", "--User", "--group",
	"--Group", "--tty", "--cols", "--columns", "--rows", "--lines", "--width", "--quick-pid", "--sid", "--deselect"}

// psBSDValueOpts are the BSD-style letters whose value is the rest of
// the word (ps axo pid, ps Oe: o's value is "pid", O's is "e").
const psBSDValueOpts = "OoptUkq"

// checkGetent: shadow and gshadow are the password hashes.
func checkGetent(args []arg) (Action, string) {
	p := getentSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if len(p.operands) > 0 && (p.operands[0].val == "shadow" || p.operands[0].val == "gshadow") {
		return Approve, "getent " + p.operands[0].val + " prints password hashes"
	}
	return Allow, ""
}
