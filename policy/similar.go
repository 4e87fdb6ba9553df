package policy

import (
	"net/netip"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Similar reports whether command is like granted in the sense of a
// scoped grant ("approve similar for 30 min"): read on the syntax tree,
// both are one simple command, or pipelines of the same shape, with the
// same program written the same way, the same subcommand, the same
// options in the same order (option values of the same class) and
// positional arguments of the same class (see argClass). Anything the
// parser cannot be sure of is not similar: lists (;, &&, ||), background
// jobs, negation, compound commands, words computed at run time or globs
// the grant did not have word for word, assignments and redirections
// other than the grant's own. Programs that run other programs or code
// (wrappers, shells, interpreters) are similar only to themselves, word
// for word.
//
// Similar says nothing of the verdict: the caller checks that the policy
// still only asks approval for command on its target, never deny.
func Similar(granted, command string) bool {
	g, ok := parseOne(granted)
	if !ok {
		return false
	}
	c, ok := parseOne(command)
	if !ok {
		return false
	}
	return similarCmd(g, c, granted, command)
}

// parseOne parses src as exactly one statement, without background,
// negation or coprocess.
func parseOne(src string) (*syntax.Stmt, bool) {
	f, err := syntax.NewParser(syntax.Variant(ShellDialect)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	s := f.Stmts[0]
	return s, !s.Negated && !s.Background && !s.Coprocess
}

// similarCmd compares two statements: the same pipeline shape, each
// stage similar.
func similarCmd(g, c *syntax.Stmt, gsrc, csrc string) bool {
	if !sameSources(g.Redirs, c.Redirs, gsrc, csrc) || hasHeredoc(c.Redirs) {
		return false
	}
	switch gc := g.Cmd.(type) {
	case *syntax.CallExpr:
		cc, ok := c.Cmd.(*syntax.CallExpr)
		return ok && similarCall(gc, cc, gsrc, csrc)
	case *syntax.BinaryCmd:
		cb, ok := c.Cmd.(*syntax.BinaryCmd)
		return ok && gc.Op == syntax.Pipe && cb.Op == syntax.Pipe &&
			similarCmd(gc.X, cb.X, gsrc, csrc) && similarCmd(gc.Y, cb.Y, gsrc, csrc)
	}
	return false
}

// sameSources reports whether two lists of nodes (redirections,
// assignments) read the same, node by node.
func sameSources[N syntax.Node](g, c []N, gsrc, csrc string) bool {
	if len(g) != len(c) {
		return false
	}
	for i := range g {
		gs, cs := sourceOf(g[i], gsrc), sourceOf(c[i], csrc)
		if gs == "" || gs != cs {
			return false
		}
	}
	return true
}

// hasHeredoc reports whether a redirection carries a body that its own
// source text does not show.
func hasHeredoc(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		if r.Hdoc != nil {
			return true
		}
	}
	return false
}

// similarCall compares two simple commands word by word.
func similarCall(g, c *syntax.CallExpr, gsrc, csrc string) bool {
	if len(g.Args) == 0 || len(g.Args) != len(c.Args) || !sameSources(g.Assigns, c.Assigns, gsrc, csrc) {
		return false
	}
	gw, cw := make([]arg, len(g.Args)), make([]arg, len(c.Args))
	for i := range g.Args {
		gw[i], cw[i] = resolveWord(g.Args[i], gsrc), resolveWord(c.Args[i], csrc)
	}
	if !gw[0].static() || !cw[0].static() || gw[0].val != cw[0].val {
		return false // the same program, written the same way: not /tmp/systemctl
	}
	if exactOnly(programName(gw[0].val)) {
		return sameWords(gw, cw)
	}
	return similarArgs(subcommands(programName(gw[0].val)), gw[1:], cw[1:])
}

// sameWords reports whether two lists of words are the same as written.
func sameWords(g, c []arg) bool {
	for i := range g {
		if g[i].src != c[i].src || g[i].val != c[i].val {
			return false
		}
	}
	return true
}

// exactOnly reports whether a program runs other programs or code given
// in its arguments: a like-looking argument may run anything.
func exactOnly(prog string) bool {
	if _, ok := handlers[prog]; ok {
		return true
	}
	for _, p := range interpreterPrefixes {
		if strings.HasPrefix(prog, p) {
			return true
		}
	}
	return false
}

// interpreterPrefixes are the names (and versioned names: python3.12)
// of programs that run code or other commands from their arguments.
var interpreterPrefixes = []string{"python", "perl", "ruby", "node", "php", "lua", "tclsh", "awk", "gawk", "mawk", "nawk",
	"sed", "find", "parallel", "flock", "su", "runuser", "chroot", "nsenter", "unshare", "systemd-run", "script", "expect", "make"}

// subcommandDepth is how many leading positional words of a program are
// its subcommand (systemctl restart, kubectl rollout restart): they must
// be the same word. Past them, any word of the name class may differ.
// For programs not listed, letter-only words (verbs like "restart", but
// also names like "nginx") must match exactly wherever they stand.
var subcommandDepth = map[string]int{
	"systemctl": 1, "kubectl": 2, "docker": 1, "podman": 1, "git": 1, "helm": 1,
	"apt": 1, "apt-get": 1, "dnf": 1, "yum": 1, "supervisorctl": 1, "pm2": 1, "journalctl": 0,
	"kill": 0, "pkill": 0, "rm": 0, "truncate": 0, "chmod": 0, "chown": 0, "ping": 0, "dig": 0,
}

// subcommandRule says which positional words must be the same word.
type subcommandRule struct {
	depth int
	// known is set for listed programs, whose words past the subcommand
	// are names even when made of letters only.
	known bool
	// docker is set for docker and podman, whose group subcommands
	// (compose, container, …) take a second subcommand word.
	docker bool
}

func subcommands(prog string) subcommandRule {
	if prog == "docker" || prog == "podman" {
		return subcommandRule{depth: 1, known: true, docker: true}
	}
	d, ok := subcommandDepth[prog]
	if !ok {
		return subcommandRule{}
	}
	return subcommandRule{depth: d, known: true}
}

// dockerGroups are docker and podman subcommands that take a second
// subcommand word (docker compose restart, docker container stop).
var dockerGroups = map[string]bool{"compose": true, "container": true, "image": true, "network": true, "volume": true, "system": true, "builder": true, "buildx": true}

// similarArgs compares the words after the program: options by name (and
// their attached values by class), positional words by class, the
// subcommand words exactly.
func similarArgs(rule subcommandRule, g, c []arg) bool {
	pos, endOpts, first := 0, false, ""
	for i := range g {
		if !g[i].static() || !c[i].static() || g[i].procSubst || c[i].procSubst {
			if g[i].src != c[i].src || g[i].val != c[i].val {
				return false // computed or globbed: only the grant's own word
			}
			pos++
			continue
		}
		if !endOpts && (strings.HasPrefix(g[i].val, "-") || strings.HasPrefix(c[i].val, "-")) {
			endOpts = g[i].val == "--"
			if !similarOption(g[i].val, c[i].val) {
				return false
			}
			continue
		}
		if pos == 0 {
			first = g[i].val
		}
		if pos == 1 && rule.docker && dockerGroups[first] {
			rule.depth = 2
		}
		fixed := pos < rule.depth || (!rule.known && (isLetters(g[i].val) || isLetters(c[i].val)))
		if fixed && g[i].val != c[i].val || !sameClass(g[i].val, c[i].val) {
			return false
		}
		pos++
	}
	return true
}

// similarOption compares two option words: the same option, and an
// attached value (--since=1h) of the same class. A combined short option
// with its value (-n50) must be the same word.
func similarOption(g, c string) bool {
	gn, gv, gok := strings.Cut(g, "=")
	cn, cv, cok := strings.Cut(c, "=")
	if !strings.HasPrefix(g, "--") || !gok || !cok {
		return g == c
	}
	return gn == cn && sameClass(gv, cv)
}

func isLetters(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// sameClass reports whether two static words are of the same class, so
// that one may stand for the other: see argClass.
func sameClass(g, c string) bool {
	if g == c {
		return true
	}
	gk, ck := argClass(g), argClass(c)
	if gk != ck {
		return false
	}
	switch gk {
	case classPath:
		return path.Dir(g) == path.Dir(c) && plainPath(g) && plainPath(c)
	case classDotted:
		_, gs, _ := strings.Cut(g, ".")
		_, cs, _ := strings.Cut(c, ".")
		return gs == cs
	case classNumber, classDuration, classAddress, className:
		return true
	}
	return false // classOther: only the same word
}

// plainPath reports whether a path names its file directly: no "." or
// ".." step, no doubled or trailing slash.
func plainPath(p string) bool {
	b := path.Base(p)
	return path.Clean(p) == p && b != "." && b != ".." && !strings.Contains(p, "/../") && !strings.HasPrefix(p, "../")
}

// The classes of a positional word or an option's value.
const (
	classOther    = "other"    // anything below does not describe: the same word only
	classNumber   = "number"   // 42
	classDuration = "duration" // 30s, 1h, 2d
	classAddress  = "address"  // an IP address
	classPath     = "path"     // a word with a "/": similar under the same directory
	classDotted   = "dotted"   // a name with dots (nginx.service, db1.example.com): the same after its first dot
	className     = "name"     // a unit, service, pod or host name: letters, digits, - _ @ :
)

var (
	nameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_@:+-]*$`)
	dottedRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_@:+-]*(\.[A-Za-z0-9][A-Za-z0-9_@:+-]*)+$`)
	durationRE = regexp.MustCompile(`^[0-9]+(ms|s|m|h|d|w|min|sec)$`)
	pathRE     = regexp.MustCompile(`^/?([A-Za-z0-9_@:+.-]+/)*[A-Za-z0-9_@:+.-]+/?$`)
)

// argClass is the class of a static word.
func argClass(s string) string {
	switch {
	case s != "" && strings.Trim(s, "0123456789") == "":
		return classNumber
	case durationRE.MatchString(s):
		return classDuration
	case isAddress(s):
		return classAddress
	case strings.Contains(s, "/") && pathRE.MatchString(s):
		return classPath
	case dottedRE.MatchString(s):
		return classDotted
	case nameRE.MatchString(s):
		return className
	}
	return classOther
}

func isAddress(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
