package hosts

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// hiddenPaths turns the policy's secret path entries into the paths that
// exist on this host, for the sandbox to mask: an absolute entry is
// globbed as it is; a ~/ entry in each of homes; a bare file name (with
// wildcards) in each home, its .ssh, and dir (the command's working
// directory) — a name can be anywhere, and those are where credentials
// are kept and where a command starts. Entries for other processes' files
// (/proc/*/…) are left out: processes come and go, and there the lack of
// capabilities and Landlock's ptrace scope refuse the read. A path under
// another listed one is dropped (the outer mask covers it), and a
// symbolic link is followed only when root or the bot's user owns it, so
// that nobody else can point a mask at, say, /usr.
func hiddenPaths(entries, homes []string, dir string) []string {
	var paths, names []string
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e, "/proc/") && strings.ContainsAny(e, "*?["):
		case strings.HasPrefix(e, "/"):
			paths = append(paths, glob(e)...)
		case strings.HasPrefix(e, "~/"):
			for _, h := range homes {
				paths = append(paths, glob(filepath.Join(h, e[2:]))...)
			}
		case !strings.Contains(e, "/"):
			names = append(names, e)
		}
	}
	for _, d := range nameDirs(homes, dir) {
		paths = append(paths, matchNames(d, names)...)
	}
	return outermost(slices.DeleteFunc(paths, func(p string) bool { return !trustedPath(p) }))
}

// glob is filepath.Glob without its error (only a malformed pattern).
func glob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// nameDirs are the directories searched for bare secret names.
func nameDirs(homes []string, dir string) []string {
	var dirs []string
	for _, h := range homes {
		dirs = append(dirs, h)
		if ssh := filepath.Join(h, ".ssh"); trustedPath(ssh) {
			dirs = append(dirs, ssh)
		}
	}
	if dir != "" {
		dirs = append(dirs, dir)
	}
	return dirs
}

// matchNames lists the entries of dir that match one of the patterns,
// reading dir once.
func matchNames(dir string, patterns []string) []string {
	if len(patterns) == 0 {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, e.Name()); ok {
				out = append(out, filepath.Join(dir, e.Name()))
				break
			}
		}
	}
	return out
}

// trustedPath reports whether p may be masked: it exists and is not a
// symbolic link, or is one that root or the bot's user owns.
func trustedPath(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (st.Uid == 0 || int(st.Uid) == os.Geteuid())
}

// outermost sorts paths, drops duplicates, "/" and paths under another.
func outermost(paths []string) []string {
	slices.Sort(paths)
	var out []string
	for _, p := range slices.Compact(paths) {
		if p == "/" || len(out) > 0 && strings.HasPrefix(p, out[len(out)-1]+"/") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// homeDirs are the home directories whose secrets are masked: the bot's
// ($HOME) and every account's in /etc/passwd whose directory that account
// owns (a real home: /root, /home/alice, /var/lib/jenkins; not /bin or
// /nonexistent).
func homeDirs() []string {
	var homes []string
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		homes = append(homes, filepath.Clean(h))
	}
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return homes
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 7 || !filepath.IsAbs(fields[5]) {
			continue
		}
		if uid, err := strconv.Atoi(fields[2]); err == nil && ownedBy(fields[5], uid) {
			homes = append(homes, filepath.Clean(fields[5]))
		}
	}
	slices.Sort(homes)
	return slices.Compact(homes)
}

// ownedBy reports whether dir is a directory owned by uid.
func ownedBy(dir string, uid int) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
