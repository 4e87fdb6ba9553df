package approvals

import (
	"fmt"
	"strings"
)

// checkSort: -o/--output writes a file and --compress-program runs one;
// GNU accepts any unambiguous abbreviation (--out, --compress-prog).
func checkSort(args []arg) (Action, string) {
	p := optSpec{shortArg: "ktoST", longArg: []string{"key", "field-separator", "output", "buffer-size", "temporary-directory", "compress-program", "parallel", "batch-size", "files0-from", "sort", "random-source"}}.parse(args)
	if p.has("compress-program") {
		return Approve, "sort --compress-program runs a program"
	}
	if o := p.find("o", "output"); o != nil {
		return writeTo("sort "+o.String(), o.value)
	}
	return refuseOpts(p, "")
}

// checkXxd: a second operand is an output file.
func checkXxd(args []arg) (Action, string) {
	p := optSpec{shortArg: "cglosn", longArg: []string{"cols", "groupsize", "len", "offset", "seek", "name"}}.parse(args)
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
	p := optSpec{shortArg: "fCTXbFgHIKLNVM", longArg: []string{"file", "directory", "files-from", "exclude-from", "to-command", "use-compress-program", "info-script", "new-volume-script", "checkpoint-action", "blocking-factor", "format", "newer", "label", "index-file", "rsh-command", "owner", "group", "mode", "transform", "exclude"}}.parse(words)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("t", "list") {
		return Approve, "tar writes files unless it only lists (-t)"
	}
	return refuseOpts(p, "runs a program or writes files", "c", "x", "r", "u", "A", "d", "I", "F", "create", "extract", "get", "append", "update", "catenate", "concatenate", "delete", "diff", "compare",
		"to-command", "use-compress-program", "info-script", "new-volume-script", "checkpoint-action", "rsh-command", "index-file", "remove-files")
}

// checkRead refuses reading into an array element, whose subscript bash
// evaluates as arithmetic.
func checkRead(args []arg) (Action, string) {
	p := optSpec{shortArg: "adinNptu"}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	names := p.operands
	if o := p.find("a"); o != nil {
		names = append(names, arg{src: o.value, val: o.value})
	}
	for _, a := range names {
		if !a.static() || strings.ContainsRune(a.val, '[') || envLike(a.val) {
			return Approve, fmt.Sprintf("read into %s, a computed, subscripted or environment-like name", a.show())
		}
	}
	return Allow, ""
}

// checkPrintf: -v assigns to a variable, possibly an array element.
func checkPrintf(args []arg) (Action, string) {
	if len(args) > 0 && args[0].couldBe("-v") {
		return Approve, "printf -v assigns to a variable"
	}
	return Allow, ""
}

// checkTop allows batch mode only; interactive top takes keystrokes that
// kill and renice.
func checkTop(args []arg) (Action, string) {
	p := optSpec{shortArg: "dnpuUowEeO"}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("b") {
		return Approve, "top without -b is interactive"
	}
	return Allow, "batch mode"
}

var checkUniq = maxOperands(optSpec{shortArg: "fsw", longArg: []string{"skip-fields", "skip-chars", "check-chars", "group", "all-repeated"}}, 1, "uniq writes its second operand")

// checkTree: -o writes the listing to a file, -R with -H writes HTML files.
func checkTree(args []arg) (Action, string) {
	p := optSpec{shortArg: "LPIoHT", longArg: []string{"filelimit", "timefmt", "sort", "fromfile", "charset"}}.parse(args)
	return refuseOpts(p, "writes files", "o", "R")
}

// checkFile: -C compiles a magic file into the working directory.
func checkFile(args []arg) (Action, string) {
	p := optSpec{shortArg: "mfFeP", longArg: []string{"magic-file", "files-from", "separator", "exclude", "parameter"}}.parse(args)
	return refuseOpts(p, "writes a compiled magic file", "C", "compile")
}

// checkLastlog: --clear and --set change the records.
func checkLastlog(args []arg) (Action, string) {
	p := optSpec{shortArg: "bturR", longArg: []string{"before", "time", "user", "root"}}.parse(args)
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
