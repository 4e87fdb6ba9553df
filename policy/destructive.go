package policy

import (
	"fmt"
	"strings"
)

// destructive returns why a command is refused outright, whatever the
// config says, or "". The list is short on purpose: it names commands no
// chat thread should run on a production host, and everything else that
// changes state goes to a human through approve.
func destructive(prog string, args []arg) string {
	switch {
	case prog == "rm":
		return rmRoot(args)
	case prog == "mkfs" || strings.HasPrefix(prog, "mkfs.") || prog == "mke2fs" || prog == "mkswap" || prog == "wipefs":
		return prog + " destroys a file system"
	case prog == "dd":
		for _, a := range args {
			if of, ok := strings.CutPrefix(a.val, "of="); ok && a.static() && sensitivePath(of) {
				return fmt.Sprintf("dd writes to %s", of)
			}
		}
	case prog == "shred":
		return "shred destroys data"
	case prog == "chmod" || prog == "chown" || prog == "chgrp":
		if recursive(args, "R", "recursive") && touchesRoot(args) {
			return prog + " -R on a top-level directory"
		}
	case prog == "tee":
		for _, a := range args {
			if a.static() && !strings.HasPrefix(a.val, "-") && !harmlessSink(a.val) && sensitivePath(a.val) {
				_, why := writeTo("tee", a.val)
				return why
			}
		}
	}
	return ""
}

// rmRoot refuses recursive removal of / , a top-level directory or home.
func rmRoot(args []arg) string {
	p := optSpec{lenient: true}.parse(args)
	if p.has("no-preserve-root") {
		return "rm --no-preserve-root"
	}
	if recursive(args, "r", "R", "recursive") && touchesRoot(args) {
		return "rm -r on /, a top-level directory or a home directory"
	}
	return ""
}

func recursive(args []arg, names ...string) bool {
	return optSpec{lenient: true}.parse(args).has(names...)
}

// touchesRoot reports whether an operand is /, a top-level directory or
// a home directory, or a glob that could match one.
func touchesRoot(args []arg) bool {
	for _, a := range args {
		if a.dynamic != "" || (a.static() && strings.HasPrefix(a.val, "-")) {
			continue
		}
		v := strings.TrimRight(a.val, "/")
		switch {
		case v == "" || v == "~" || v == "." || v == ".." || v == "*" || v == "~/*":
			return true
		case strings.HasPrefix(v, "/") && strings.Count(v, "/") == 1:
			return true
		case strings.HasPrefix(v, "/home/") && strings.Count(v, "/") == 2:
			return true
		}
	}
	return false
}
