package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// call classifies one simple command: its assignments, its words, and
// what the words run.
func (w *walker) call(c *syntax.CallExpr, sc scope, vis map[*syntax.CallExpr]bool) {
	for _, as := range c.Assigns {
		w.nested(as, sc, vis)
		w.assignment(as, sc, len(c.Args) == 0)
	}
	argv := make([]arg, len(c.Args))
	for i, word := range c.Args {
		w.words(sc, vis, word)
		argv[i] = resolveWord(word, sc.src)
	}
	w.classify(argv, sc)
}

// assignment checks NAME=VALUE, before a command or on its own.
func (w *walker) assignment(as *syntax.Assign, sc scope, alone bool) {
	if as.Name == nil {
		w.verdict.add(Approve, "an assignment the classifier does not understand")
		return
	}
	val := ""
	if as.Value != nil {
		v := resolveWord(as.Value, sc.src)
		val = v.show()
		if !v.static() {
			val = "\x00" // computed: never a safe value
		}
	}
	if as.Index != nil || as.Array != nil || as.Append || !safeEnv(as.Name.Value, val) {
		what := "the environment of the command"
		if alone {
			what = "every later command"
		}
		w.verdict.add(Approve, fmt.Sprintf("sets %s, which changes %s", as.Name.Value, what))
	}
}

// safeEnv reports whether setting a variable cannot make a program run
// something else: locale, time zone and display settings only, and pagers
// set to cat.
func safeEnv(name, val string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_TIME", "LC_NUMERIC", "LC_COLLATE", "LC_MONETARY":
		// A value with a "/" is a path: glibc loads locale data and time
		// zones from it, gettext message catalogues.
		return !strings.ContainsAny(val, "\x00/")
	case "COLUMNS", "LINES", "TERM", "NO_COLOR", "TIME_STYLE", "SYSTEMD_COLORS":
		return !strings.ContainsRune(val, 0)
	case "PAGER", "SYSTEMD_PAGER", "GIT_PAGER", "MANPAGER":
		return val == "" || val == "cat"
	}
	return strings.HasPrefix(name, "LC_") && !strings.ContainsAny(val, "\x00/")
}

// redirects checks a statement's redirections and returns the scope with
// the standard input they set up.
func (w *walker) redirects(rs []*syntax.Redirect, sc scope, vis map[*syntax.CallExpr]bool) scope {
	for _, r := range rs {
		w.words(sc, vis, r.Word, r.Hdoc)
		switch r.Op {
		case syntax.RdrIn:
			a := resolveWord(r.Word, sc.src)
			w.inputFrom(r.Word, a)
			sc.stdin, sc.text = stdinFile, a.show()
		case syntax.DplIn:
			sc.stdin, sc.text = stdinFile, ""
		case syntax.Hdoc, syntax.DashHdoc:
			sc.stdin, sc.text = heredoc(r)
		case syntax.WordHdoc:
			a := resolveWord(r.Word, sc.src)
			sc.stdin, sc.text = stdinFile, ""
			if a.dynamic == "" {
				sc.stdin, sc.text = stdinText, a.val+"\n"
			}
		case syntax.DplOut:
			if a := resolveWord(r.Word, sc.src); !a.static() || !isFD(a.val) {
				w.outputFile(a)
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
			syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
			w.outputFile(resolveWord(r.Word, sc.src))
		default:
			w.verdict.add(Approve, fmt.Sprintf("redirection %s is not understood", r.Op))
		}
	}
	return sc
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func (w *walker) inputFile(a arg) {
	if a.couldBe("/dev/tcp/") || strings.HasPrefix(a.val, "/dev/tcp/") || strings.HasPrefix(a.val, "/dev/udp/") {
		w.verdict.add(Approve, fmt.Sprintf("redirection from %s opens a network connection", a.show()))
	}
	if e, unplaced := w.secretArg(a); e != "" {
		w.verdict.add(Approve, fmt.Sprintf("redirection from %s may read a file: %s", a.show(), secretCite(e, unplaced)))
	}
}

// outputFile judges an output redirection's target.
func (w *walker) outputFile(a arg) {
	switch {
	case a.static() && harmlessSink(a.val):
		if w.fdAlias && a.val != "/dev/null" {
			w.verdict.add(Approve, fmt.Sprintf("writes to %s while a redirection may have opened a descriptor on a file", a.val))
		}
	case !a.static():
		w.verdict.add(Approve, fmt.Sprintf("writes to a file named at run time (%s)", a.show()))
	default:
		w.verdict.add(writeTo("", a.val))
	}
}

// writeTo judges a program writing the file p: deny for system paths and
// start-up files, approve for any other file.
func writeTo(prog, p string) (Action, string) {
	if prog != "" {
		prog += " "
	}
	if sensitivePath(p) {
		return Deny, fmt.Sprintf("%swrites to %s, a system path or a start-up file", prog, p)
	}
	return Approve, fmt.Sprintf("%swrites to the file %s", prog, p)
}

// mayAliasFile reports whether a redirection can leave a descriptor open
// on a file that writing /dev/stdout, /dev/stderr or /dev/fd/N would then
// reopen for writing: Linux resolves those names to the open file itself.
// Input redirections are not path-checked, so `1</etc/passwd` followed by
// `>/dev/stdout` would otherwise write /etc/passwd.
func mayAliasFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrInOut, syntax.DplIn:
		return true
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return r.N != nil && r.N.Value != "0"
	case syntax.DplOut:
		if r.Word == nil || len(r.Word.Parts) != 1 {
			return true
		}
		lit, ok := r.Word.Parts[0].(*syntax.Lit)
		return !ok || (lit.Value != "1" && lit.Value != "2" && lit.Value != "-")
	}
	return false
}

// runsExec reports whether a statement's command may be exec, also behind
// builtin, command or a wrapper: its redirections then stay open for what
// follows.
func runsExec(c syntax.Command, src string) bool {
	call, ok := c.(*syntax.CallExpr)
	if !ok {
		return false
	}
	for _, word := range call.Args {
		if a := resolveWord(word, src); !a.static() || a.val == "exec" {
			return true
		}
	}
	return false
}

func harmlessSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	// An open descriptor, as <(…) and >(…) give: what runs there is
	// classified on its own.
	// Never /dev/fd/0: writing the command's input is no output.
	n := strings.TrimPrefix(p, "/dev/fd/")
	return n != p && isFD(n) && n != "-" && strings.TrimLeft(n, "0") != ""
}

// startupFiles run code when a shell or a tool starts: writing them is
// how a command plants something for later.
var startupFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".profile": true,
	".zshrc": true, ".zprofile": true, ".zshenv": true, ".zlogin": true, ".kshrc": true, ".inputrc": true,
	".gitconfig": true, ".netrc": true, ".pam_environment": true, "authorized_keys": true, ".vimrc": true,
}

// sensitivePath reports whether writing p would change the system or plant
// code: system directories, devices, kernel interfaces, shell start-up
// files and SSH keys.
func sensitivePath(p string) bool {
	for _, dir := range []string{"/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/dev", "/proc", "/sys", "/root", "/var/spool/cron", "/var/lib"} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	return startupFiles[base] || strings.Contains(p, ".ssh/") || strings.HasSuffix(p, ".ssh") || strings.Contains(p, ".config/autostart")
}

// maxCommandBytes bounds what the classifier parses.
const maxCommandBytes = 64 << 10

// checkText refuses what a reviewer could not see: invalid UTF-8 and
// control, invisible or bidirectional characters.
func (w *walker) checkText(s string) {
	if strings.TrimSpace(s) == "" {
		w.verdict.add(Approve, "the command is empty")
		return
	}
	if len(s) > maxCommandBytes {
		w.verdict.add(Approve, fmt.Sprintf("the command is %d bytes long, too long to classify (limit %d)", len(s), maxCommandBytes))
		return
	}
	if !utf8.ValidString(s) {
		w.verdict.add(Deny, "the command is not valid UTF-8")
		return
	}
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if name, hidden := hiddenRune(r); hidden {
			w.verdict.add(Deny, fmt.Sprintf("contains an invisible or control character (%s at byte %d)", name, i))
			return
		}
	}
}

// record adds a classified command to the decision.
func (w *walker) record(c Command) {
	if w.fdAlias {
		for _, a := range c.Argv {
			if strings.Contains(a, "/dev/std") || strings.Contains(a, "/dev/fd/") || strings.Contains(a, "/proc/self/fd/") {
				c.add(Approve, fmt.Sprintf("names %s while a redirection may have opened a descriptor on a file", a))
				break
			}
		}
	}
	w.cmds = append(w.cmds, c)
	for _, r := range c.Reasons {
		w.verdict.add(c.Action, c.label()+": "+r)
	}
	if len(c.Reasons) == 0 {
		w.verdict.add(c.Action, c.label()+": no reason given")
	}
}

// decision is the walk's outcome.
func (w *walker) decision() Decision {
	d := Decision{Action: w.verdict.action, Reasons: w.verdict.lines(), Commands: w.cmds}
	if len(d.Reasons) == 0 {
		d.Reasons = []string{"nothing to run"}
	}
	return d
}

// add records a finding; only the findings of the command's strictest
// action are kept as its reasons.
func (c *Command) add(a Action, why string) {
	switch {
	case a > c.Action || len(c.Reasons) == 0:
		c.Action, c.Reasons = max(a, c.Action), append(c.Reasons[:0:0], why)
	case a == c.Action:
		c.Reasons = append(c.Reasons, why)
	}
}

func (c Command) label() string {
	if c.Program != "" {
		return c.Program
	}
	if len(c.Argv) > 0 {
		return c.Argv[0]
	}
	return "command"
}
