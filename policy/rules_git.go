package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// gitReads are the git subcommands that only read the repository.
var gitReads = []string{"status", "log", "show", "diff", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
	"ls-files", "ls-tree", "ls-remote", "cat-file", "grep", "show-ref", "for-each-ref", "count-objects", "name-rev",
	"merge-base", "whatchanged", "cherry", "range-diff", "diff-tree", "diff-files", "diff-index", "check-ignore",
	"check-attr", "verify-commit", "verify-tag", "var", "version"}

// gitGlobalSpec is git's own options before the subcommand, read by
// git.c's handle_options: exact names, stopping at the subcommand.
var gitGlobalSpec = optSpec{short: "C:c:pPvh", long: []string{"exec-path=?", "html-path", "man-path", "info-path", "paginate",
	"no-pager", "no-replace-objects", "git-dir=", "work-tree=", "namespace=", "bare", "literal-pathspecs", "no-literal-pathspecs",
	"glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "no-optional-locks", "super-prefix=", "config-env=", "list-cmds=",
	"attr-source=", "version", "help"}, stopAtOperand: true, exact: true}

// The subcommands that list in one form and change refs or the config in
// another are read exactly (git's parse-options: unique abbreviations,
// optional values attached only: `git branch --color NAME` creates NAME).
var (
	gitBranchSpec = optSpec{short: "vqt::u:rlaDdmMcCfi", long: []string{"verbose", "quiet", "track=?", "no-track", "set-upstream-to=",
		"unset-upstream", "color=?", "no-color", "remotes", "contains=", "no-contains=", "abbrev=?", "no-abbrev", "all", "delete", "move",
		"copy", "list", "show-current", "create-reflog", "edit-description", "force", "merged=", "no-merged=", "column=?", "no-column",
		"sort=", "points-at=", "ignore-case", "recurse-submodules", "format=", "omit-empty"}}
	gitTagSpec = optSpec{short: "ln::asu:fdvm:F:ei", long: []string{"list", "contains=", "no-contains=", "merged=", "no-merged=",
		"points-at=", "sort=", "format=", "color=?", "no-color", "ignore-case", "column=?", "no-column", "omit-empty", "annotate", "sign",
		"local-user=", "force", "delete", "verify", "message=", "file=", "edit", "cleanup=", "create-reflog", "trailer="}}
	gitConfigSpec = optSpec{short: "lzef:", long: []string{"global", "system", "local", "worktree", "file=", "blob=", "get", "get-all",
		"get-regexp", "get-urlmatch", "replace-all", "add", "unset", "unset-all", "rename-section", "remove-section", "list", "fixed-value",
		"edit", "get-color", "get-colorbool", "type=", "bool", "int", "bool-or-int", "bool-or-str", "path", "expiry-date", "null",
		"name-only", "includes", "no-includes", "show-origin", "show-scope", "default="}}
	gitRemoteSpec   = optSpec{short: "vn", long: []string{"verbose", "push", "all"}}
	gitWorktreeSpec = optSpec{short: "vz", long: []string{"porcelain", "verbose", "expire="}}
	// gitLenient reads the options of git's read-only subcommands (log and
	// diff alone have hundreds) only to find the few that write a file or
	// run a program, matching abbreviations of those.
	gitLenient = optSpec{lenient: true}
	// gitGrepSpec knows git grep's options that take a value, to tell
	// the pattern and the paths apart.
	gitGrepSpec = optSpec{lenient: true, short: "e:f:A:B:C:m:", long: []string{"max-depth=", "threads=", "after-context=", "before-context=", "context=", "max-count="}}
)

// gitDangerous write a file or run a program in a read-only subcommand:
// --filters runs the clean and smudge commands a .gitattributes file
// names (--textconv is judged by gitDrivers, apart from --text).
var gitDangerous = []string{"output", "O", "open-files-in-pager", "ext-diff", "upload-pack", "receive-pack", "exec", "output-directory", "run", "filters"}

// gitReadsFiles are the options of a subcommand that read a file the
// command names outside the repository into what it prints.
var gitReadsFiles = map[string][]string{"blame": {"contents", "ignore-revs-file", "S"}, "annotate": {"contents", "ignore-revs-file", "S"},
	"grep": {"f"}}

// checkGit allows the subcommands that read; in them --output writes a
// file and -O runs a pager command; -c sets config that can run programs.
func checkGit(args []arg) (Action, string) {
	g := gitGlobalSpec.parse(args)
	if g.unknown != "" {
		return Approve, g.unknown
	}
	for _, o := range g.findAll("c", "config-env", "exec-path") {
		if !(o.name == "exec-path" && o.value == "") {
			return Approve, fmt.Sprintf("git %s can run a program", o)
		}
	}
	if o := g.find("git-dir", "work-tree"); o != nil {
		return Approve, fmt.Sprintf("git %s names a repository or work tree git then trusts without its safe.directory ownership check, and its config can run programs", o)
	}
	if len(g.rest) == 0 {
		return Allow, ""
	}
	sub, rest := g.rest[0], g.rest[1:]
	if !sub.static() {
		return Approve, fmt.Sprintf("the git subcommand %s is computed at run time", sub.src)
	}
	switch sub.val {
	case "branch", "tag":
		return gitRefList(sub.val, rest)
	case "config":
		return gitConfig(rest)
	case "stash", "remote", "worktree", "submodule", "reflog":
		return gitListVerb(sub.val, rest)
	}
	if !slices.Contains(gitReads, sub.val) {
		return Approve, "git " + sub.val + " changes the repository or talks to a remote"
	}
	p := gitLenient.parse(rest)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find(gitDangerous...); o != nil {
		return Approve, fmt.Sprintf("git %s %s can write a file or run a program", sub.val, o)
	}
	if o := p.find(gitReadsFiles[sub.val]...); o != nil {
		return Approve, fmt.Sprintf("git %s %s reads a file outside the repository", sub.val, o)
	}
	if sub.val == "ls-remote" {
		// The repository's config picks where and how it connects:
		// url.<base>.insteadOf rewrites any URL (to ext:: too),
		// remote.<name>.uploadpack runs a command, and a remote named
		// HELPER::ADDRESS runs git-remote-HELPER.
		return Approve, "git ls-remote connects where the repository's config says and can run the command it names (url.*.insteadOf, remote.*.uploadpack)"
	}
	if why := gitDrivers(sub.val, p); why != "" {
		return Approve, why
	}
	return Allow, "git " + sub.val + " only reads"
}

// gitDrivers says why a read runs a command a repository's config names
// per path, when the command line asks for it: --textconv (cat-file,
// grep, and the patches of the plumbing). The porcelain's default
// textconv and git diff's diff.external and diff.DRIVER.command, which
// no environment can shut either (the driver's name comes from
// .gitattributes, and an empty diff.external breaks every git diff), are
// left to the sandbox under every unapproved command: approving every
// git diff, git log -p and git blame would approve the everyday reads.
func gitDrivers(sub string, p parsed) string {
	textconv := slices.ContainsFunc(p.opts, func(o opt) bool {
		return o.long && o.name != "text" && len(o.name) >= 4 && strings.HasPrefix("textconv", o.name)
	})
	if textconv {
		return fmt.Sprintf("git %s --textconv runs the command a .gitattributes file and the repository's config name", sub)
	}
	return ""
}

// gitPatch reports whether a subcommand prints patches (file contents):
// diff and show unless told to print only names or statistics (show of
// REV:PATH prints a blob, without textconv), log and whatchanged when
// asked, blame and range-diff always.
func gitPatch(sub string, p parsed) bool {
	asked := p.has("p", "u", "U", "patch", "unified", "patch-with-stat", "patch-with-raw", "cc", "c", "L", "W", "function-context", "word-diff", "color-words")
	summary := p.has("stat", "numstat", "shortstat", "name-only", "name-status", "summary", "dirstat", "X", "compact-summary", "raw", "quiet", "s", "no-patch")
	switch sub {
	case "diff":
		return asked || !summary
	case "show":
		blobs := len(p.operands) > 0 && !slices.ContainsFunc(p.operands, func(a arg) bool { return !strings.Contains(a.val, ":") })
		return asked || !summary && !blobs
	case "log", "whatchanged":
		return asked
	case "blame", "annotate", "range-diff":
		return true
	}
	return false
}

// gitRefList allows git branch and git tag in list mode only: no option
// that changes refs, and names only as --list patterns.
func gitRefList(sub string, args []arg) (Action, string) {
	spec := map[string]optSpec{"branch": gitBranchSpec, "tag": gitTagSpec}[sub]
	p := spec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	refused := map[string][]string{
		"branch": {"d", "D", "m", "M", "c", "C", "f", "u", "t", "delete", "move", "copy", "force", "set-upstream-to", "unset-upstream", "edit-description", "track", "create-reflog"},
		"tag":    {"d", "a", "s", "u", "f", "m", "F", "e", "delete", "annotate", "sign", "local-user", "force", "message", "file", "edit", "create-reflog", "trailer", "cleanup"},
	}[sub]
	if o := p.find(refused...); o != nil {
		return Approve, fmt.Sprintf("git %s %s changes refs", sub, o)
	}
	if len(p.operands) > 0 && !p.has("l", "list", "contains", "no-contains", "merged", "no-merged", "points-at") {
		return Approve, fmt.Sprintf("git %s %s creates a %s", sub, p.operands[0].show(), sub)
	}
	return Allow, "git " + sub + " lists"
}

// gitConfig allows reading the configuration.
func gitConfig(args []arg) (Action, string) {
	p := gitConfigSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("e", "edit", "unset", "unset-all", "add", "replace-all", "rename-section", "remove-section"); o != nil {
		return Approve, fmt.Sprintf("git config %s writes the config", o)
	}
	ops := p.operands
	reading := p.has("get", "get-all", "get-regexp", "get-urlmatch", "l", "list", "get-color", "get-colorbool")
	if len(ops) > 0 && ops[0].static() && (ops[0].val == "get" || ops[0].val == "list") {
		reading, ops = true, ops[1:]
	}
	if len(ops) > 1 && !reading {
		return Approve, "git config NAME VALUE writes the config"
	}
	if len(ops) > 0 && !reading && ops[0].static() && slices.Contains([]string{"set", "unset", "rename-section", "remove-section", "edit"}, ops[0].val) {
		return Approve, "git config " + ops[0].val + " writes the config"
	}
	return Allow, "git config only reads"
}

// gitListVerb allows the listing verbs of git's verb-taking subcommands;
// without a verb, git stash pushes (git stash --all stashes everything).
func gitListVerb(sub string, args []arg) (Action, string) {
	lists := map[string][]string{"stash": {"list", "show"}, "remote": {"show", "get-url"}, "worktree": {"list"},
		"submodule": {"status", "summary"}, "reflog": {"show"}}[sub]
	if len(args) == 0 {
		if sub == "stash" {
			return Approve, "git stash without a verb stashes the changes"
		}
		return Allow, "git " + sub + " lists"
	}
	verb := args[0]
	if !verb.static() {
		return Approve, fmt.Sprintf("the git %s verb %s is computed at run time", sub, verb.src)
	}
	if sub == "remote" && (verb.val == "-v" || verb.val == "--verbose") && len(args) == 1 {
		return Allow, "git remote lists"
	}
	if !slices.Contains(lists, verb.val) {
		return Approve, fmt.Sprintf("git %s %s changes the repository", sub, verb.show())
	}
	spec := map[string]optSpec{"remote": gitRemoteSpec, "worktree": gitWorktreeSpec}[sub]
	if spec.short == "" {
		spec = gitLenient
	}
	p := spec.parse(args[1:])
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find(gitDangerous...); o != nil {
		return Approve, fmt.Sprintf("git %s %s %s can write a file or run a program", sub, verb.val, o)
	}
	if sub == "remote" && verb.val == "show" && !p.has("n") {
		return Approve, "git remote show without -n connects to the remote, where and how the repository's config says"
	}
	if why := gitDrivers(sub, p); why != "" {
		return Approve, why
	}
	return Allow, "git " + sub + " " + verb.val + " only reads"
}

// gitFiles judges the files git reads that its arguments name: a path
// after -C is relative to that directory; diff with --no-index, or with
// two paths one of which is outside the repository, compares any two
// files or trees (git diff /etc/shadow /dev/null), grep --no-index reads
// a tree; and a repository in a directory that holds secrets (etckeeper's
// /etc) has them in its history, which patches and blobs show.
func (w *walker) gitFiles(c *Command, args []arg) {
	g := gitGlobalSpec.parse(args)
	if len(g.rest) == 0 || !g.rest[0].static() {
		return
	}
	base, known := gitBase(g)
	if !known {
		c.add(Approve, "git -C names a directory computed at run time, so the files it reads are not known now")
		return
	}
	sub := g.rest[0].val
	p := gitLenient.parse(g.rest[1:])
	for _, a := range p.operands {
		_, path, _ := strings.Cut(a.pattern(), ":") // REV:PATH, else the path itself
		if path == "" {
			path = a.pattern()
		}
		if e, unplaced := w.secretIn(gitJoin(base, path)); e != "" {
			c.add(Approve, fmt.Sprintf("git %s may read %s: %s", sub, a.show(), secretCite(e, unplaced)))
			return
		}
	}
	if why := w.gitTrees(sub, base, p, g.rest[1:]); why != "" {
		c.add(Approve, why)
	}
}

// gitTrees says why git would read a tree that holds secrets: the paths
// of a no-index diff or grep (grep's working directory when it names
// none), or a repository named by -C that holds a secret path (etckeeper
// keeps /etc/shadow in /etc/.git) when the command prints contents.
func (w *walker) gitTrees(sub, base string, p parsed, args []arg) string {
	var trees []string
	noIndex := p.has("no-index")
	switch {
	case sub == "grep" && noIndex:
		paths := gitGrepSpec.parse(args).operands
		if !p.has("e", "f") && len(paths) > 0 {
			paths = paths[1:]
		}
		trees = append(trees, ".")
		for _, a := range paths {
			trees = append(trees, a.pattern())
		}
		if len(paths) > 0 {
			trees = trees[1:]
		}
	case sub == "diff" && (noIndex || len(p.operands) == 2):
		for _, a := range p.operands {
			if noIndex || strings.HasPrefix(gitJoin(base, a.pattern()), "/") {
				trees = append(trees, a.pattern())
			}
		}
	}
	for _, t := range trees {
		if e := w.secretUnder(arg{src: t, val: gitJoin(base, t)}); e != "" {
			return fmt.Sprintf("git %s may read everything under %s, which holds credentials (%s)", sub, gitJoin(base, t), e)
		}
	}
	if gitShowsContent(sub, p) {
		return w.gitRepoSecret(sub, base)
	}
	return ""
}

// gitRepoSecret says why the repository a command reads may hold a secret
// path in its history: it is in a directory above one (-C /etc, or cd
// /etc), or in one known only when it runs (a computed cd, a -C path
// climbing with ..).
func (w *walker) gitRepoSecret(sub, base string) string {
	dirs := []string{base}
	if !strings.HasPrefix(base, "/") && !strings.HasPrefix(base, "~") {
		dirs = nil
		for _, d := range w.cwds {
			dirs = append(dirs, gitJoin(d, base))
		}
	}
	for _, d := range dirs {
		if strings.HasPrefix(d, cwdUnknown) || slices.Contains(strings.Split(d, "/"), "..") {
			return fmt.Sprintf("git %s prints what a repository holds, in a directory known only when it runs, which could hold credentials", sub)
		}
		if e := w.policy.secrets.under(path.Clean(d)); e != "" && d != "" {
			return fmt.Sprintf("git %s prints what the repository in %s holds, which may be a file that holds credentials (%s)", sub, d, e)
		}
	}
	return ""
}

// gitShowsContent reports whether a subcommand prints what the files of
// the repository hold.
func gitShowsContent(sub string, p parsed) bool {
	switch sub {
	case "show", "diff", "grep", "blame", "annotate", "cat-file", "range-diff", "diff-tree", "diff-files", "diff-index":
		return true
	}
	return gitPatch(sub, p)
}

// gitBase is the directory git's -C options lead to, "" when there is
// none; known is false when one is computed at run time.
func gitBase(g parsed) (base string, known bool) {
	for _, o := range g.findAll("C") {
		if o.value != "" {
			base = gitJoin(base, o.value)
		}
	}
	return base, g.unknown == ""
}

// gitJoin resolves p against dir as git -C does.
func gitJoin(dir, p string) string {
	switch {
	case dir == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return p
	case p == "" || p == ".":
		return dir
	}
	return strings.TrimSuffix(dir, "/") + "/" + p
}
