package hosts

import (
	"strconv"
	"strings"
)

// Why the sandbox scans: the policy's bare-name secrets (id_rsa, *.key,
// *.keytab…) may be in any directory, which no fixed mount list holds,
// and a command the classifier let through (grep -r foo /srv/app) reads
// whole trees. So before bubblewrap starts, the wrapper finds, under the
// paths the command may read the contents of (scanWords: not those of
// df, ls or stat, which read none), the files whose name matches one of
// those names, case-insensitively, and masks each (scannedMasks). A
// file the command names costs one name check; a directory, a find over
// its tree. Symlinks found there are followed one level: their targets
// are checked (or scanned) too, and bubblewrap masks the real path.
//
// find does not follow symlinks (-P) and does cross mounts (grep -r
// does too), but not into /proc, /sys and other kernel file systems.
// The scan, symlinks included, is bounded by scanLimit matches and
// scanTimeout; past either bound, or when a directory to scan is /,
// /proc, /sys or /dev (too big to scan), the command does not run and
// says it needs approval.

// scanLimit and scanTimeout bound the scan of one command.
const (
	scanLimit   = 2000
	scanTimeout = "3s"
	// exitNeedsApproval is the exit status of a command the scan refused.
	exitNeedsApproval = 126
)

// What a command the scan refused says, in words (stderr).
const (
	scanRefusalBound = "opsbot: this command reads more files than the sandbox can check for secrets in time; it needs a person's approval"
	scanRefusalRoot  = "opsbot: this command reads the whole file system (/, /proc, /sys or /dev); it needs a person's approval"
	scanRefusalName  = "opsbot: this command reads a path whose name the sandbox cannot check (a newline in it); it needs a person's approval"
)

// pseudoFS are the kernel file systems the scan does not enter: no
// credential is a file there, and /proc alone holds every process's tree.
var pseudoFS = []string{"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "debugfs",
	"tracefs", "bpf", "configfs", "fusectl", "mqueue", "hugetlbfs", "pstore", "binfmt_misc", "efivarfs", "autofs"}

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

// sandboxSetup is the POSIX sh that collects into "$@" every mask of an
// unapproved command: the scan for bare-name secrets under what it may
// read, then the policy's secret paths, then what the scan found. A
// command that reads no contents (uptime, df -P /) gets no scan at all.
func sandboxSetup(command string, o Options) string {
	names := bareNames(o.Hidden)
	words, cwd := scanWords(command)
	if cwd {
		words = append(words, ".")
	}
	if len(names) == 0 || len(words) == 0 {
		return maskScript(o.Hidden)
	}
	return scanScript(names, words, o.Dir) + maskScript(o.Hidden) + scannedMasks
}

// scanScript runs the scan (scanBody) bounded by scanTimeout, and ends
// the wrapper with the refusal when it says so.
func scanScript(names, words []string, dir string) string {
	refuse := func(msg string) string {
		return `{ rm -rf "$sc"; echo ` + shellQuote(msg) + ` >&2; exit ` + strconv.Itoa(exitNeedsApproval) + `; }; `
	}
	return `sc=$(mktemp -d) || exit 125; trap 'rm -rf "$sc"' EXIT HUP INT TERM; timeout -k 1s ` + scanTimeout + ` /bin/sh -c ` + shellQuote(scanBody(names, words, dir)) + ` sh "$sc"; ` +
		`case $? in 0) ;; 3) ` + refuse(scanRefusalRoot) + `;; 4) ` + refuse(scanRefusalName) + `;; *) ` + refuse(scanRefusalBound) + `;; esac; ` +
		`[ "$(wc -l < "$sc/m")" -le ` + strconv.Itoa(scanLimit) + ` ] || ` + refuse(scanRefusalBound)
}

// scanBody is the scan, run as `sh -c BODY sh DIR`: it writes to DIR/m
// the bare-name secrets under words (resolved in dir, the login
// directory when empty), one absolute path a line. Exit 3: a word is
// /, /proc, /sys or /dev; 4: a path has a newline in its name. The paths
// are only ever used as "$r", never parsed again, so a file name cannot
// inject shell.
func scanBody(names, words []string, dir string) string {
	var ws []string
	for _, w := range words {
		ws = append(ws, shellWord(w))
	}
	cd := ""
	if dir != "" {
		cd = "cd " + shellQuote(dir) + " || exit 0; "
	}
	var expr []string
	for _, n := range names {
		expr = append(expr, "-iname "+shellQuote(n))
	}
	var prune []string
	for _, fs := range pseudoFS {
		prune = append(prune, "-fstype "+fs)
	}
	find := `find -P "$@" \( ` + strings.Join(prune, " -o ") + ` \) -prune -o \( ` + strings.Join(expr, " -o ") + ` \) -print`
	return `sc=$1; : > "$sc/m"; : > "$sc/l"; ` +
		`( ` + cd + `for w in ` + strings.Join(ws, " ") + `; do if [ -e "$w" ]; then printf '%s\0' "$w"; fi; done ) > "$sc/w" 2>/dev/null; ` +
		`( ` + cd + `xargs -0 -r realpath -e -- < "$sc/w" ) > "$sc/r" 2>/dev/null; ` +
		rootsArgs("r") +
		`if [ $# -gt 0 ]; then ` + find + ` -o -type l -fprint "$sc/l" > "$sc/m" 2>/dev/null; fi; ` +
		`tr '\n' '\0' < "$sc/l" | xargs -0 -r realpath -e -- > "$sc/t" 2>/dev/null; ` +
		rootsArgs("t") +
		`if [ $# -gt 0 ]; then ` + find + ` >> "$sc/m" 2>/dev/null; fi; exit 0`
}

// rootsArgs reads the paths of "$sc/FILE" into "$@", exiting 3 on a root
// too big to scan and 4 on a line that is no path (a name with a newline
// split it).
func rootsArgs(file string) string {
	return `set --; while IFS= read -r r; do [ -e "$r" ] || exit 4; case $r in /|/proc|/sys|/dev) exit 3;; esac; set -- "$@" "$r"; done < "$sc/` + file + `"; `
}

// scannedMasks is the POSIX sh that adds to "$@" a mask for each path in
// "$sc/m" (scanScript), and removes the scan's files.
const scannedMasks = `while IFS= read -r f; do ` + resolveLink +
	`if [ -d "$f" ]; then set -- "$@" --tmpfs "$f"; else set -- "$@" --ro-bind /dev/null "$f"; fi; done < "$sc/m"; rm -rf "$sc"; `

// shellWord is a pattern of scanWords as one shell word: a backslash
// makes the next character literal; *, ? and a plain [...] class stay
// wildcards; everything else is single-quoted.
func shellWord(pattern string) string {
	var b, lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			b.WriteString(shellQuote(lit.String()))
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			lit.WriteByte(pattern[i])
		case c == '*' || c == '?':
			flush()
			b.WriteByte(c)
		case c == '[' && plainClass(pattern[i:]) > 0:
			n := plainClass(pattern[i:])
			flush()
			b.WriteString(pattern[i : i+n])
			i += n - 1
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	if b.Len() == 0 {
		return "''"
	}
	return b.String()
}
