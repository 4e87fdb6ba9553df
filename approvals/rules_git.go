package approvals

import (
	"fmt"
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
)

// gitDangerous write a file or run a program in a read-only subcommand.
var gitDangerous = []string{"output", "O", "open-files-in-pager", "ext-diff", "upload-pack", "receive-pack", "exec", "output-directory", "run"}

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
	for _, op := range p.operands {
		// A remote named HELPER::ADDRESS runs git-remote-HELPER: ext::
		// runs any command where protocol.allow lets it.
		if sub.val == "ls-remote" && (!op.static() || strings.Contains(op.val, "::")) {
			return Approve, fmt.Sprintf("git ls-remote %s goes through a remote helper, which can run a command", op.show())
		}
	}
	return Allow, "git " + sub.val + " only reads"
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
	return Allow, "git " + sub + " " + verb.val + " only reads"
}
