package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// handler classifies a program that runs other code: a wrapper, a shell,
// an interpreter, eval. It records the command and what it runs.
type handler func(w *walker, c *Command, args []arg, sc scope)

// handlers are looked up by program name before the allowlist.
var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"xargs": (*walker).xargs, "watch": (*walker).watch, "ssh": (*walker).ssh,
		"command": (*walker).commandBuiltin, "exec": (*walker).execBuiltin, "busybox": (*walker).busybox,
	}
	for name, spec := range wrappers {
		handlers[name] = wrapperHandler(spec)
	}
	// The shells whose language the classifier parses exactly; zsh, ksh,
	// mksh and yash each extend POSIX in their own way, so they are
	// foreign (see shellDialects).
	for _, name := range []string{"sh", "bash", "dash", "ash", "posh"} {
		handlers[name] = (*walker).shell
	}
	for _, name := range []string{"zsh", "ksh", "ksh93", "mksh", "lksh", "yash", "fish", "csh", "tcsh", "rc", "es", "elvish", "nu", "xonsh", "pwsh", "powershell"} {
		handlers[name] = (*walker).foreignShell
	}
	for name, why := range codeBuiltins {
		handlers[name] = refuse(why)
	}
}

// codeBuiltins run strings as code or change how later commands are
// found or run; they are never allowed, whatever the default.
var codeBuiltins = map[string]string{
	"eval": "eval runs a string built at run time", "source": "source runs a script file", ".": ". runs a script file",
	"trap": "trap installs code to run later", "enable": "enable loads builtins from shared objects",
	"hash": "hash changes which file a command name runs", "alias": "alias changes what a command name runs",
	"unalias": "unalias changes what a command name runs", "fc": "fc re-runs commands from history",
	"bind": "bind can attach commands to keys", "complete": "complete can register commands to run",
	"set": "set changes shell options for later commands", "shopt": "shopt changes shell options for later commands",
	"unset": "unset changes variables and functions for later commands", "mapfile": "mapfile can run a callback",
	"readarray": "readarray can run a callback", "coproc": "coproc starts a background process",
	"export": "export changes the environment of later commands", "declare": "declare changes variables for later commands",
	"typeset": "typeset changes variables for later commands", "local": "local changes variables", "readonly": "readonly changes variables",
	"let": "let evaluates arithmetic, which can run code hidden in variables", "getopts": "getopts changes variables",
	"disown": backgroundWhy("disown", "keeps a background job running after the shell exits"), "bg": backgroundWhy("bg", "resumes a job in the background"),
}

func refuse(why string) handler {
	return func(w *walker, c *Command, _ []arg, _ scope) {
		c.add(Approve, why)
		w.record(*c)
	}
}

// classify classifies one simple command given as words.
func (w *walker) classify(argv []arg, sc scope) {
	if len(argv) == 0 {
		return
	}
	c := &Command{Argv: shows(argv), Via: sc.via, words: argv}
	name := argv[0]
	if !name.static() {
		c.add(Approve, fmt.Sprintf("the command name is computed at run time (%s)", name.kindOr("a glob")))
		w.record(*c)
		return
	}
	c.Program = programName(name.val)
	if h, ok := handlers[c.Program]; ok {
		h(w, c, argv[1:], sc)
		return
	}
	if isInterpreter(c.Program) {
		w.interpreter(c, argv[1:], sc)
		return
	}
	w.program(c, argv[1:])
	if sendsInput(c.Program, argv[1:]) && sc.stdin != stdinNone && !(sc.stdin == stdinFile && sc.text == "/dev/null") {
		c.add(Approve, "sends its input to the server, which can change state there")
	}
	w.record(*c)
}

// sendsInput reports whether a program passes its standard input on to a
// server, so that what it sends is not known from its arguments.
func sendsInput(prog string, args []arg) bool {
	return prog == "openssl" && len(args) > 0 && args[0].val == "s_client"
}

// systemDirs are where a program run by absolute path is taken to be the
// program of that name; anything else is classified by its full path.
var systemDirs = []string{"/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/"}

func programName(v string) string {
	for _, d := range systemDirs {
		if base, ok := strings.CutPrefix(v, d); ok && base != "" && !strings.Contains(base, "/") && base != "." && base != ".." {
			return base
		}
	}
	return v
}

func shows(argv []arg) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a.show()
	}
	return out
}

// program decides an ordinary program: the config's rules first, then the
// built-in allowlist and argument rules, then the default. Built-in deny
// rules hold whatever the config says.
func (w *walker) program(c *Command, args []arg) {
	if why := destructive(c.Program, args); why != "" {
		c.add(Deny, why)
	}
	if w.configRules(c, args) {
		return // a rule may allow a read or a destination the defaults do not
	}
	w.allowlisted(c, args)
	w.secretRead(c, args)
	w.recursiveRead(c, args)
	w.egressCheck(c, args)
	w.dumpCheck(c, args)
	if c.Program == "git" {
		w.gitFiles(c, args)
	}
}

// allowlisted decides a program no config rule covers: the config's and
// the built-in allowlist, then the default.
func (w *walker) allowlisted(c *Command, args []arg) {
	p := w.policy
	switch check, builtin := allowlist[c.Program]; {
	case p.allow[c.Program]:
		c.add(Allow, "allowlisted in the config")
	case builtin && !p.removed[c.Program]:
		if check == nil {
			c.add(Allow, "read-only")
			return
		}
		if a, why := check(args); a == Allow {
			c.add(Allow, orText(why, "read-only with these arguments"))
		} else {
			c.add(max(a, p.def), why) // a stricter default holds here too
		}
	default:
		c.add(p.def, fmt.Sprintf("not on the read-only allowlist (default: %s)", p.def))
	}
}

// configRules applies the matching config rules; it reports whether any
// matched.
func (w *walker) configRules(c *Command, args []arg) bool {
	matched := false
	for _, r := range w.policy.rules {
		if r.applies(w.target, c.Program, args) {
			matched = true
			c.add(r.action, r.describe())
		}
	}
	return matched
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var interpreterName = regexp.MustCompile(`^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|irb|php[0-9.]*|lua[0-9.]*|luajit|node|nodejs|deno|bun|Rscript|tclsh[0-9.]*|wish|expect|julia|groovy|jshell|scala|osascript|gdb|guile|racket|sbcl|ghci|runghc|erl|escript|elixir|iex)$`)

func isInterpreter(name string) bool { return interpreterName.MatchString(name) }

// interpreter classifies a language runtime: only version queries and
// python's json.tool are read-only; inline code, scripts and modules need
// approval; a program read from a pipe is refused.
func (w *walker) interpreter(c *Command, args []arg, sc scope) {
	switch {
	case len(args) == 1 && args[0].static() && (args[0].val == "--version" || args[0].val == "-V"):
		c.add(Allow, "prints its version")
	case isJSONTool(c.Program, args):
		w.jsonTool(c, args)
	case len(args) == 0 || (args[0].static() && args[0].val == "-"):
		w.programFromStdin(c, sc)
	case hasInlineCode(args):
		c.add(Approve, fmt.Sprintf("inline code for an interpreter (%s %s)", c.Program, args[0].show()))
	default:
		c.add(Approve, fmt.Sprintf("%s runs code the policy cannot read (%s)", c.Program, args[0].show()))
	}
	w.record(*c)
}

// isJSONTool reports whether the words run python's json.tool on standard
// input or one file (a second file is its output), isolated or not.
func isJSONTool(prog string, args []arg) bool {
	args, _ = pythonIsolated(args)
	if !strings.HasPrefix(prog, "python") || len(args) < 2 || len(args) > 3 {
		return false
	}
	for _, a := range args {
		if !a.static() {
			return false
		}
	}
	return args[0].val == "-m" && args[1].val == "json.tool" && (len(args) == 2 || !strings.HasPrefix(args[2].val, "-"))
}

func hasInlineCode(args []arg) bool {
	for _, a := range args {
		v := a.val
		if strings.HasPrefix(v, "--eval") || strings.HasPrefix(v, "--print") || strings.HasPrefix(v, "--command") || v == "-ex" {
			return true
		}
		if strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v[1:], "cerEp") {
			return true
		}
	}
	return false
}

// programFromStdin judges a shell or interpreter that reads its program
// from standard input.
func (w *walker) programFromStdin(c *Command, sc scope) {
	switch sc.stdin {
	case stdinPipe:
		c.add(Deny, "reads a program from a pipe, which nobody approving can see")
	case stdinFile:
		c.add(Approve, "reads a program from a file or a computed here-document")
	case stdinText:
		c.add(Approve, "reads a program from a here-document")
	default:
		c.add(Approve, "starts an interactive interpreter")
	}
}
