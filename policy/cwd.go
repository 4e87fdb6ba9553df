package policy

import (
	"os"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A relative path is opened in the shell's working directory: the
// login's home or the session's directory, or wherever a cd before it
// went. Which cd runs before which read, and which one a subshell's end
// undoes, is not tracked: every directory a cd anywhere in the command
// line may go to (in functions, subshells, loops, branches, $(…), behind
// `command` and `builtin`) is a place each relative path is judged in.

const (
	// cwdUnknown stands in walker.cwds for a directory not known now.
	cwdUnknown = "\x00"
	// cwdHome stands in walker.cwds for the home directory of the user
	// running the command on an SSH host, alone or followed by "/" and a
	// path below it.
	cwdHome = "~"
)

// noteDirChanges records where the cd commands of a parsed script go,
// before its commands are judged: a relative path after `cd /etc` is
// read there (cd /etc; cat shadow).
func (w *walker) noteDirChanges(f *syntax.File, src string) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			w.noteDirCall(call.Args, src)
		}
		return true
	})
}

// noteDirCall records where a simple command goes if it is cd, pushd or
// popd.
func (w *walker) noteDirCall(words []*syntax.Word, src string) {
	args := make([]arg, len(words))
	for i, word := range words {
		args[i] = resolveWord(word, src)
	}
	name, rest := dirBuiltin(args)
	switch name {
	case "cd":
		ops := skipOptions(rest) // -L, -P, -e, -@
		if len(ops) == 0 {
			ops = []arg{{src: "~", val: "~"}} // cd alone goes home
		}
		w.chdir(ops[0])
	case "pushd":
		// pushd alone swaps the top two, +N and -N rotate the stack.
		ops := skipOptions(rest)
		if len(ops) == 0 {
			ops = []arg{{src: "-", val: "-"}}
		}
		w.chdir(ops[0])
	case "popd":
		w.cwds = append(w.cwds, cwdUnknown)
	}
}

// dirBuiltin returns the directory builtin a command runs, if any, and its
// arguments, looking through the command and builtin builtins, which run
// it as well (command cd /etc).
func dirBuiltin(args []arg) (string, []arg) {
	for len(args) > 0 && args[0].static() {
		switch args[0].val {
		case "cd", "pushd", "popd":
			return args[0].val, args[1:]
		case "builtin", "command":
			args = skipOptions(args[1:])
		default:
			return "", nil
		}
	}
	return "", nil
}

// skipOptions drops the option words at the start of args, and a "--"
// that ends them.
func skipOptions(args []arg) []arg {
	for len(args) > 0 && args[0].static() && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val == "--" {
			return args[1:]
		}
		args = args[1:]
	}
	return args
}

// chdir records a change of directory to a.
func (w *walker) chdir(a arg) {
	for _, d := range w.dirsOf(a) {
		if !slices.Contains(w.cwds, d) {
			w.cwds = append(w.cwds, d)
		}
	}
}

// dirsOf are the directories a cd to a may go to: a relative one is
// looked up in CDPATH and the working directory, "-" is $OLDPWD, and a
// home directory other than the bot's own is not known here.
func (w *walker) dirsOf(a arg) []string {
	unknown := []string{cwdUnknown}
	if !a.static() {
		return unknown
	}
	v := a.val
	switch {
	case strings.HasPrefix(v, "/"):
		return w.placeDir(v)
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home, err := os.UserHomeDir(); err == nil && w.local() {
			return w.placeDir(home + v[1:])
		}
		if climbs(v[1:]) {
			return unknown
		}
		return []string{path.Clean(v)}
	case v == "~+":
		return nil
	case strings.HasPrefix(v, "~"):
		prefix, rest := tildeWord(v)
		if home, ok := w.userHome(prefix); ok {
			return w.placeDir(home + "/" + rest)
		}
	}
	return unknown
}

// placeDir is where a cd to the absolute path p goes: bash's cd first
// drops ".." with the name before it (cd -L, the default: /var/run/.. is
// /var), cd -P walks as the kernel does (/var/run/.. is /); both are
// kept, a place known only when it runs as cwdUnknown.
func (w *walker) placeDir(p string) []string {
	var out []string
	for _, q := range []string{path.Clean(p), p} {
		placed, unplaced := w.place(q)
		if unplaced {
			placed = cwdUnknown
		}
		if !slices.Contains(out, placed) {
			out = append(out, placed)
		}
	}
	return out
}

// programDirs adds to walker.cwds the directories a program's own options
// make it work in (git -C /etc diff --no-index shadow …, tar -C), for the
// relative paths among its arguments; the returned func takes them away
// again.
func (w *walker) programDirs(prog string, args []arg) (restore func()) {
	n := len(w.cwds)
	restore = func() { w.cwds = w.cwds[:n:n] }
	var dirs []arg
	switch prog {
	case "git":
		dirs = gitDirs(args)
	case "tar":
		for _, u := range fileOptUses([]fileOpt{{short: 'C', long: "directory"}}, args) {
			dirs = append(dirs, u.file)
		}
	}
	for _, d := range dirs {
		w.chdir(d)
	}
	return restore
}

// gitDirs are the values of git's -C options, which come before the
// subcommand (after it, -C is another option: git log -C finds copies).
func gitDirs(args []arg) []arg {
	var dirs []arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.static():
			return append(dirs, a) // it could be -C
		case a.val == "-C" && i+1 < len(args):
			dirs = append(dirs, args[i+1])
			i++
		case a.val == "-c" || a.val == "--git-dir" || a.val == "--work-tree" || a.val == "--namespace" || a.val == "--config-env" || a.val == "--super-prefix":
			i++
		case !strings.HasPrefix(a.val, "-"):
			return dirs
		}
	}
	return dirs
}
