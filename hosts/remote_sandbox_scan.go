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
// those names, case-insensitively, and masks each (scannedMasks).
//
// The scan writes nothing on the host: its state is shell variables, a
// path a line (a name with a newline refuses the command), so a wrapper
// killed at its deadline leaves nothing behind. It is cheap: the words
// are expanded and resolved by the wrapper's own sh (cd -P, no process);
// a file it names costs a name check in sh (a case pattern); all the
// directories together cost one find. Symlinks found in those trees, and
// named ones, are followed one level: one realpath for all of them, then
// one find over the directories they lead to. bubblewrap masks real paths
// (the roots are resolved, and find does not follow symlinks under them).
//
// find does cross mounts (grep -r does too), but not into /proc, /sys and
// other kernel file systems. Each find is bounded by scanTimeout and the
// masks by scanLimit; past either bound, or when a directory to scan is
// /, /proc, /sys or /dev (too big to scan), the command does not run and
// says it needs approval. The scan needs GNU find (-printf, -quit): where
// find cannot run it (BusyBox's), a command that needs a scan does not
// run and says it needs approval (scanSeen).

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
	scanRefusalFind  = "opsbot: this host's find cannot check what this command reads for secrets (the sandbox needs GNU find); it needs a person's approval"
)

// scanSeen is the first line of every scan that worked: find prints it
// for /dev/null, its first starting point, before anything it found. A
// find that cannot run the scan (BusyBox's has no -printf, and fails
// with the same status as a tree it could not wholly read) prints
// nothing, and the command is refused rather than run unmasked.
const scanSeen = "G"

// pseudoFS are the kernel file systems the scan does not enter: no
// credential is a file there, and /proc alone holds every process's tree.
var pseudoFS = []string{"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "debugfs",
	"tracefs", "bpf", "configfs", "fusectl", "mqueue", "hugetlbfs", "pstore", "binfmt_misc", "efivarfs", "autofs"}

// bareNames are the entries of hidden that are a bare file name (no
// slash): the names a secret has in any directory.
func bareNames(hidden []string) []string {
	var names []string
	for _, e := range hidden {
		if e != "" && !strings.ContainsAny(e, "/\x00\n") {
			names = append(names, e)
		}
	}
	return names
}

// sandboxSetup is the POSIX sh that collects into "$@" every mask of an
// unapproved command: the policy's secret paths, and the bare-name
// secrets the scan found under what it may read. A command that reads no
// contents (uptime, df -P /) gets no scan at all.
func sandboxSetup(command string, o Options) string {
	names := bareNames(o.Hidden)
	words, cwd, near := scanWords(command)
	if cwd {
		words = append([]string{"."}, words...) // first: what is under it needs no scan of its own
	}
	if len(names) == 0 || len(words) == 0 {
		return maskScript(o.Hidden)
	}
	return scanScript(names, words, near, o.Dir) + maskScriptWith(o.Hidden, scannedMasks)
}

// scanScript is the scan, run by the wrapper's sh before the masks: it
// leaves in $_sm the real paths to mask, one a line, or ends the wrapper
// with a refusal. Its shell functions:
//   - _sx MSG: refuse;
//   - _sa PATH: resolve an existing path; a directory is added to $_sr
//     (the trees to find in), a symlink to $_sl (to follow), another
//     file checked by name (_sn);
//   - _su DIR: whether DIR is under none of $_sr (scanned already);
//   - _sf LINKS: one find over $_sr, reading its lines (_sp) into $_sm,
//     $_sk (symlinks with a secret's name) and, when LINKS, $_sl;
//   - _sR LIST: the real paths of LIST (one realpath), in $_sq.
//
// The working directory is scanned first when one of near exists in it.
func scanScript(names, words, near []string, dir string) string {
	var ws, ns []string
	for _, w := range words {
		ws = append(ws, shellWord(w))
	}
	for _, w := range near {
		ns = append(ns, shellWord(w))
	}
	nearLoop := ""
	if len(ns) > 0 {
		nearLoop = `for _sw in ` + strings.Join(ns, " ") + `; do if [ -e "$_sw" ]; then _sa .; break; fi; done; `
	}
	if dir == "" {
		dir = "."
	}
	refuse := func(msg string) string { return "_sx " + shellQuote(msg) }
	find := `timeout -k 1s ` + scanTimeout + ` find -P /dev/null $_sr -path /dev/null -printf '` + scanSeen + `\n' -o ` + findExpr(findNames(names))
	return `_nl='` + "\n" + `'; _sm=; _sr=; _sl=; _sk=; CDPATH=; ` +
		`_sx() { echo "$1" >&2; exit ` + strconv.Itoa(exitNeedsApproval) + `; }; ` +
		`_sn() { case ${1##*/} in ` + casePattern(names) + `) _sm=$_sm$1$_nl;; esac; }; ` +
		`_sa() { case $1 in *"$_nl"*) ` + refuse(scanRefusalName) + `;; esac; ` +
		`if [ -d "$1" ]; then cd -P -- "$1" 2>/dev/null || return 0; set -- "$PWD"; cd "$_sb" || exit 125; ` +
		`case $1 in /|/proc|/sys|/dev) ` + refuse(scanRefusalRoot) + `;; esac; _su "$1" && _sr=$_sr$1$_nl; return 0; fi; ` +
		`case $1 in */*) cd -P -- "${1%/*}/";; *) cd -P .;; esac 2>/dev/null || return 0; set -- "${PWD%/}/${1##*/}"; cd "$_sb" || exit 125; ` +
		`if [ -L "$1" ]; then _sl=$_sl$1$_nl; else _sn "$1"; fi; }; ` +
		`_su() { IFS=$_nl; set -f; for _st in $_sr; do case $1/ in "$_st"/*) unset IFS; set +f; return 1;; esac; done; unset IFS; set +f; }; ` +
		`_sp() { IFS=$_nl; set -f; for _sw in $1; do case $_sw in "L "/*) _sl=$_sl${_sw#L }$_nl;; "l "/*) _sk=$_sk${_sw#l }$_nl;; ?" "/*) _sm=$_sm${_sw#??}$_nl;; *) ` + refuse(scanRefusalName) + `;; esac; done; unset IFS; set +f; }; ` +
		`_sf() { [ -n "$_sr" ] || return 0; _so=$(IFS=$_nl; set -f; if [ -n "$1" ]; then exec ` + find + ` -o -type l -printf 'L %p\n' 2>/dev/null; fi; exec ` + find + ` 2>/dev/null); ` +
		`case $? in 0|1) ;; *) ` + refuse(scanRefusalBound) + `;; esac; ` +
		`case $_so in ` + scanSeen + `) _so=;; ` + scanSeen + `"$_nl"*) _so=${_so#` + scanSeen + `"$_nl"};; *) ` + refuse(scanRefusalFind) + `;; esac; _sr=; _sp "$_so"; }; ` +
		`_sR() { _sq=$(IFS=$_nl; set -f; exec realpath -m -- $1) || ` + refuse(scanRefusalName) + `; ` +
		`[ "$(_sN "$1")" = "$(_sN "$_sq")" ] || ` + refuse(scanRefusalName) + `; }; ` +
		`_sN() { IFS=$_nl; set -f; set -- $1; echo $#; }; ` +
		`_s0=$PWD; if cd ` + shellQuote(dir) + ` 2>/dev/null; then _sb=$PWD; ` + nearLoop + `for _sw in ` + strings.Join(ws, " ") + `; do if [ -e "$_sw" ]; then _sa "$_sw"; fi; done; ` +
		`_sf L; if [ -n "$_sl" ]; then _sR "$_sl"; _sl=; IFS=$_nl; set -f; for _sw in $_sq; do unset IFS; set +f; if [ -e "$_sw" ]; then _sa "$_sw"; fi; done; unset IFS; set +f; _sf; fi; ` +
		`if [ -n "$_sk" ]; then _sR "$_sk"; _sm=$_sm$_sq$_nl; fi; fi; cd "$_s0" || exit 125; `
}

// findNames is find's test for a secret's name: -iname for each.
func findNames(names []string) string {
	var expr []string
	for _, n := range names {
		expr = append(expr, "-iname "+shellQuote(n))
	}
	return `\( ` + strings.Join(expr, " -o ") + ` \)`
}

// findExpr is the find expression of the scan: kernel file systems
// pruned; a secret's name, or a symlink when the caller adds `-o -type l
// -printf …`, with a newline in its path quits with "N"; a secret's name
// prints its type and path.
func findExpr(names string) string {
	var prune []string
	for _, fs := range pseudoFS {
		prune = append(prune, "-fstype "+fs)
	}
	return `\( ` + strings.Join(prune, " -o ") + ` \) -prune -o -path "*$_nl*" \( ` + names + ` -o -type l \) -printf 'N\n' -quit -o ` +
		names + ` -printf '%y %p\n'`
}

// scannedMasks is the POSIX sh that adds to "$@" a mask for each path in
// $_sm (scanScript), refusing the command past scanLimit; directories
// are remounted read-only once every mask is in place.
var scannedMasks = `_sc=0; IFS=$_nl; set -f; for f in $_sm; do _sc=$((_sc+1)); [ $_sc -le ` + strconv.Itoa(scanLimit) + ` ] || _sx ` + shellQuote(scanRefusalBound) + `; ` +
	`if [ -d "$f" ]; then set -- "$@" --tmpfs "$f"; elif [ -e "$f" ]; then set -- "$@" --ro-bind /dev/null "$f"; fi; done; ` +
	`for f in $_sm; do if [ -d "$f" ]; then set -- "$@" --remount-ro "$f"; fi; done; unset IFS; set +f; `

// casePattern is the names as one pattern of an sh case, matching in any
// case: a letter is a class of both cases ([kK]); *, ? and a plain [...]
// class stay wildcards; everything else is quoted.
func casePattern(names []string) string {
	var pats []string
	for _, n := range names {
		var b strings.Builder
		for i := 0; i < len(n); i++ {
			c := n[i]
			switch {
			case c == '*' || c == '?':
				b.WriteByte(c)
			case c == '[' && plainClass(n[i:]) > 0:
				k := plainClass(n[i:])
				b.WriteString(n[i : i+k])
				i += k - 1
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				b.WriteString("[" + strings.ToLower(string(c)) + strings.ToUpper(string(c)) + "]")
			default:
				b.WriteString(shellQuote(string(c)))
			}
		}
		pats = append(pats, b.String())
	}
	return strings.Join(pats, "|")
}

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
