package policy

import (
	"fmt"
	"strings"
)

// checkSort: -o/--output writes a file and --compress-program runs one;
// GNU accepts any unambiguous abbreviation (--out, --compress-prog).
func checkSort(args []arg) (Action, string) {
	p := sortSpec.parse(args)
	if p.has("compress-program") {
		return Approve, "sort --compress-program runs a program"
	}
	if p.has("files0-from") {
		return Approve, "sort --files0-from reads and prints files named in a file the policy cannot see"
	}
	var act Action
	var why string
	for _, o := range p.findAll("o", "output") {
		if a, w := writeTo("sort "+o.String(), o.value); a > act || why == "" {
			act, why = a, w
		}
	}
	if why != "" {
		return act, why
	}
	return refuseOpts(p, "")
}

// checkXxd: a second operand is an output file.
func checkXxd(args []arg) (Action, string) {
	p := xxdSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if len(p.operands) > 1 {
		return Approve, "xxd writes its second operand"
	}
	return Allow, ""
}

// findActions write files, delete them or run commands.
var findActions = []string{"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}

// checkFind: find's expression may delete, write or run; an expression
// word computed at run time could be any of them.
func checkFind(args []arg) (Action, string) {
	for _, a := range args {
		if a.dynamic != "" {
			return Approve, fmt.Sprintf("the find expression %s is computed at run time (%s)", a.src, a.dynamic)
		}
		for _, act := range findActions {
			if a.couldBe(act) {
				return Approve, fmt.Sprintf("find %s %s", act, map[bool]string{true: "deletes files", false: "runs a command or writes a file"}[act == "-delete"])
			}
		}
	}
	return Allow, ""
}

// checkTar allows listing an archive only.
func checkTar(args []arg) (Action, string) {
	if len(args) == 0 || !args[0].static() {
		return Approve, "tar without a known mode"
	}
	words := args
	if first := args[0].val; !strings.HasPrefix(first, "-") {
		// Old style (tar tzf x): each letter takes its value from the next
		// words in turn, so only letters without values are read this way.
		if strings.Trim(first, "tvfzjJ") != "" {
			return Approve, "tar " + first + " is not a listing"
		}
		words = append([]arg{{src: "-" + first, val: "-" + first}}, args[1:]...)
	}
	p := tarSpec.parse(words)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("t", "list") {
		return Approve, "tar writes files unless it only lists (-t)"
	}
	// List mode still writes with --volno-file, -g, --index-file and
	// runs programs with -I, -F, --to-command, --checkpoint-action: only
	// the options that read and print are allowed.
	if bad, ok := p.onlyOpts(tarListOpts...); !ok {
		return Approve, "tar " + bad + " can run a program or write a file, even when listing"
	}
	for _, o := range p.findAll("f", "file") {
		if strings.Contains(o.value, ":") && !p.has("force-local") {
			return Approve, "tar -f HOST:FILE runs a remote shell to reach the archive"
		}
	}
	return Allow, "lists the archive"
}

// tarListOpts are the tar options that only choose what to list and how.
var tarListOpts = []string{"t", "list", "f", "file", "v", "verbose", "z", "gzip", "gunzip", "ungzip", "j", "bzip2", "J", "xz", "lzma",
	"lzip", "lzop", "zstd", "Z", "compress", "uncompress", "a", "auto-compress", "no-auto-compress", "C", "directory", "wildcards",
	"no-wildcards", "wildcards-match-slash", "no-wildcards-match-slash", "anchored", "no-anchored", "ignore-case", "no-ignore-case",
	"exclude", "X", "exclude-from", "T", "files-from", "null", "no-null", "numeric-owner", "full-time", "utc", "quoting-style",
	"quote-chars", "no-quote-chars", "show-stored-names", "show-transformed-names", "show-omitted-dirs", "show-defaults",
	"R", "block-number", "i", "ignore-zeros", "occurrence", "strip-components", "transform", "xform", "no-recursion", "recursion",
	"warning", "H", "format", "b", "blocking-factor", "B", "read-full-records", "record-size", "force-local", "unquote", "no-unquote",
	"verbatim-files-from", "no-verbatim-files-from", "O", "to-stdout", "acls", "no-acls", "xattrs", "no-xattrs", "selinux", "no-selinux",
	"seek", "no-seek", "sparse", "totals", "check-links", "starting-file", "K", "newer-mtime", "N", "newer", "after-date", "help", "usage", "version", "restrict"}

// checkRead refuses reading into an array element, whose subscript bash
// evaluates as arithmetic.
func checkRead(args []arg) (Action, string) {
	p := readSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	names := p.operands
	for _, o := range p.findAll("a") {
		names = append(names, arg{src: o.value, val: o.value})
	}
	for _, a := range names {
		if !a.static() || strings.ContainsRune(a.val, '[') || envLike(a.val) {
			return Approve, fmt.Sprintf("read into %s, a computed, subscripted or environment-like name", a.show())
		}
	}
	return Allow, ""
}

// checkPrintf: -v assigns to a variable, possibly an array element whose
// subscript runs code. Bash's printf reads its options with getopt "v:",
// so the name may be attached (-vNAME); options end at the first word not
// starting with "-", or after "--".
func checkPrintf(args []arg) (Action, string) {
	if len(args) == 0 {
		return Allow, ""
	}
	if a := args[0]; (!a.static() && a.mayBeOption()) || strings.HasPrefix(a.val, "-v") {
		return Approve, "printf -v assigns to a variable"
	}
	return Allow, ""
}

// checkTop allows batch mode only; interactive top takes keystrokes that
// kill and renice.
func checkTop(args []arg) (Action, string) {
	p := topSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("b") {
		return Approve, "top without -b is interactive"
	}
	return Allow, "batch mode"
}

// checkTload: tload draws its graph on the terminal or file its operand
// names, writing it.
var checkTload = maxOperands(tloadSpec, 0, "tload writes its graph to the terminal or file it names")

var checkUniq = maxOperands(uniqSpec, 1, "uniq writes its second operand")

// checkTree: -o writes the listing to a file, -R with -H writes HTML files.
func checkTree(args []arg) (Action, string) {
	p := treeSpec.parse(args)
	return refuseOpts(p, "writes files", "o", "R")
}

// checkFile: -C compiles a magic file into the working directory.
func checkFile(args []arg) (Action, string) {
	p := fileSpec.parse(args)
	return refuseOpts(p, "writes a compiled magic file", "C", "compile")
}

// checkLastlog: --clear and --set change the records.
func checkLastlog(args []arg) (Action, string) {
	p := lastlogSpec.parse(args)
	return refuseOpts(p, "changes the lastlog records", "C", "S", "clear", "set")
}

// checkTest: -v and -R evaluate array subscripts, which can run code.
func checkTest(args []arg) (Action, string) {
	for _, a := range args {
		if a.couldBe("-v") || a.couldBe("-R") {
			return Approve, "test -v evaluates array subscripts, which can run code"
		}
	}
	return Allow, ""
}

// checkWait: -p assigns to a variable, possibly an array element.
func checkWait(args []arg) (Action, string) {
	for _, a := range args {
		if !a.static() || strings.Contains(a.val, "p") && strings.HasPrefix(a.val, "-") {
			return Approve, "wait -p assigns to a variable"
		}
	}
	return Allow, ""
}

// checkPidstat: -e runs a program.
func checkPidstat(args []arg) (Action, string) {
	for _, a := range args {
		if a.couldBe("-e") {
			return Approve, "pidstat -e runs a program"
		}
	}
	return Allow, ""
}
