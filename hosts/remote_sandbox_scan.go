package hosts

import (
	"strconv"
	"strings"
)

// Why the sandbox scans: the policy's bare-name secrets (id_rsa, *.key,
// *.keytab…) may be in any directory, which no fixed mount list holds,
// and a command the classifier let through (grep -r foo /srv/app) reads
// whole trees. So before bubblewrap starts, the wrapper finds, under the
// directories the command may read (every word of it that names an
// existing path on the host, and its working directory when one is set:
// scanning a login directory, often large, would cost every command its
// bound; its top and .ssh are masked by name, see maskWords), the files whose
// name matches one of those names, case-insensitively, and masks each
// (scanScript). One level of symlinks found there is followed to its
// target, which is scanned too. find runs with -P (no symlink followed)
// and -xdev, bounded by scanLimit matches and scanTimeout; past either
// bound the command does not run and says it needs approval.

// scanLimit and scanTimeout bound the scan for bare-name secrets.
const (
	scanLimit   = 2000
	scanTimeout = "2s"
	// exitNeedsApproval is the exit status of a command refused because
	// its tree was too large to scan.
	exitNeedsApproval = 126
)

// scanRefusal is what a refused command says, in words.
const scanRefusal = "opsbot: this command reads more files than the sandbox can check for secrets in time; it needs a person's approval"

// bareNames are the entries of hidden that are a bare file name (no
// slash): the names a secret has in any directory.
func bareNames(hidden []string) []string {
	var names []string
	for _, e := range hidden {
		if e != "" && !strings.ContainsAny(e, "/\x00") {
			names = append(names, e)
		}
	}
	return names
}

// pathWords are the words of command that may name a path: it split at
// blanks, quotes and shell operators, and at '=' (--dir=/srv). Each is
// tried on the host; those that exist are scanned.
func pathWords(command string) []string {
	seen := map[string]bool{}
	var words []string
	for _, w := range strings.FieldsFunc(command, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";|&<>()$`'\"=,{}", r)
	}) {
		if !seen[w] && len(words) < 256 {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// scanScript is the POSIX sh, run before maskScript's masks are read,
// that writes to "$sc/m" the bare-name secrets under what command, run in
// dir (the login directory when empty), may read; see the top of this
// file. The paths are only ever used as "$r" and read line by line: a
// name with a newline becomes paths that do not exist, which bubblewrap
// refuses to mount over, so the command does not run.
func scanScript(hidden []string, command, dir string) string {
	names := bareNames(hidden)
	if len(names) == 0 {
		return ""
	}
	var expr []string
	for _, n := range names {
		expr = append(expr, "-iname "+shellQuote(n))
	}
	match := `\( ` + strings.Join(expr, " -o ") + ` \)`
	var words []string
	for _, w := range pathWords(command) {
		words = append(words, shellQuote(w))
	}
	cd := ""
	if dir != "" { // the login directory is not scanned: see the top of this file
		cd = "cd " + shellQuote(dir) + " || exit 0; "
		words = append(words, ".")
	}
	refuse := "{ rm -rf \"$sc\"; echo " + shellQuote(scanRefusal) + " >&2; exit " + strconv.Itoa(exitNeedsApproval) + "; }; "
	return `sc=$(mktemp -d) || exit 125; ` +
		`( ` + cd + `for w in ` + strings.Join(words, " ") + `; do if [ -e "$w" ] || [ -L "$w" ]; then readlink -f -- "$w"; fi; done ) > "$sc/r" 2>/dev/null; ` +
		`set --; while IFS= read -r r; do set -- "$@" "$r"; done < "$sc/r"; : > "$sc/m"; : > "$sc/l"; ` +
		`if [ $# -gt 0 ]; then timeout ` + scanTimeout + ` find -P "$@" -xdev ` + match + ` -print -o -type l -fprint "$sc/l" > "$sc/m" 2>/dev/null; [ $? -ge 124 ] && ` + refuse + `fi; ` +
		`set --; while IFS= read -r r; do r=$(readlink -f -- "$r") && [ -e "$r" ] && set -- "$@" "$r"; done < "$sc/l"; ` +
		`if [ $# -gt 0 ]; then timeout ` + scanTimeout + ` find -P "$@" -xdev ` + match + ` -print >> "$sc/m" 2>/dev/null; [ $? -ge 124 ] && ` + refuse + `fi; ` +
		`[ "$(wc -l < "$sc/m")" -gt ` + strconv.Itoa(scanLimit) + ` ] && ` + refuse
}

// scannedMasks is the POSIX sh that adds to "$@" a mask for each path in
// "$sc/m" (scanScript), and removes the scan's files.
func scannedMasks(hidden []string) string {
	if len(bareNames(hidden)) == 0 {
		return ""
	}
	return `while IFS= read -r f; do ` + resolveLink +
		`if [ -d "$f" ]; then set -- "$@" --tmpfs "$f"; else set -- "$@" --ro-bind /dev/null "$f"; fi; done < "$sc/m"; rm -rf "$sc"; `
}

// sandboxSetup is the POSIX sh that collects into "$@" every mask of an
// unapproved command: the scan for bare-name secrets under what it may
// read, then the policy's secret paths, then what the scan found.
func sandboxSetup(command string, o Options) string {
	return scanScript(o.Hidden, command, o.Dir) + maskScript(o.Hidden) + scannedMasks(o.Hidden)
}
