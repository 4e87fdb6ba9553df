package policy

import (
	"os"
	"os/user"
	"path"
	"strings"
)

// A path word is judged where the kernel will open it, not where its
// spelling seems to point. The shell first expands its "~" forms (~ and
// ~user are home directories, ~+ is $PWD, ~- is $OLDPWD); the kernel then
// walks it one name at a time, and a ".." leaves the directory it has
// reached, which after a symlink is the directory the link points to:
// /var/run/../etc/shadow is /etc/shadow, as /var/run leads to /run.
//
// On the bot's own host the policy walks the real file system the same
// way. On an SSH host it cannot see the file system, so any directory may
// be a symlink, and a ".." after one leads to a place known only when the
// command runs: the path is then unplaced, anything ending as it ends.

// maxLinks is how many symlinks Linux follows in one path (ELOOP after).
const maxLinks = 40

// placeForms are the absolute path patterns an absolute path pattern may
// name once the kernel has walked it: on the bot's host the path its
// symlinks lead to, and its own spelling when that has no ".." (an entry
// may be spelled through a link this machine does not have); on an SSH
// host its spelling with ".." unplaced. unplaced says a form starts with
// anyString: its folder is known only when it runs.
func (w *walker) placeForms(p string) (forms []string, unplaced bool) {
	placed, unplaced := w.place(p)
	forms = []string{placed}
	if lexical, up := placeUnseen(p); w.local() && !up && lexical != placed {
		forms = append(forms, lexical)
	}
	return forms, unplaced
}

// place resolves an absolute path pattern as the kernel will.
func (w *walker) place(p string) (string, bool) {
	if w.local() {
		return placeLocal(p)
	}
	return placeUnseen(p)
}

// placeUnseen resolves a path pattern on a file system the policy cannot
// see: "." and empty names go, "/.." is "/", and a ".." after any other
// name may follow a symlink anywhere, so what comes before it is
// anyString.
func placeUnseen(p string) (string, bool) {
	rooted := strings.HasPrefix(p, "/")
	var out []string
	unplaced := false
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "", ".":
		case "..":
			if len(out) == 0 && rooted && !unplaced {
				continue
			}
			out, unplaced = nil, true
		default:
			out = append(out, el)
		}
	}
	rest := strings.Join(out, "/")
	switch {
	case unplaced && rest == "":
		return string(anyString), true
	case unplaced:
		return string(anyString) + "/" + rest, true
	case rooted:
		return "/" + rest, false
	}
	return rest, strings.HasPrefix(rest, string(anyString))
}

// placeLocal walks an absolute path pattern on this machine as the kernel
// will: each existing name in turn, following symlinks. From a name that
// does not exist (or cannot be looked at), a wildcard, or /proc (whose
// links lead where the command's own process is, not the bot's), the rest
// is walked as on an unseen file system.
func placeLocal(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return placeUnseen(p)
	}
	cur, rest := "/", strings.Split(p[1:], "/")
	for links := 0; len(rest) > 0; {
		el := rest[0]
		rest = rest[1:]
		switch {
		case el == "" || el == ".":
			continue
		case el == "..":
			cur = path.Dir(cur)
			continue
		case hasWildcard(el) || cur == "/proc":
			return placeUnseen(path.Join(cur, el) + "/" + strings.Join(rest, "/"))
		}
		next := path.Join(cur, el)
		fi, err := os.Lstat(next)
		if err != nil {
			return placeUnseen(next + "/" + strings.Join(rest, "/"))
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			return placeUnseen(next + "/" + strings.Join(rest, "/"))
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur, false
}

// tildeWord splits a word starting with "~" into its tilde prefix (what
// follows "~" up to the first "/") and the rest after that "/".
func tildeWord(c string) (prefix, rest string) {
	prefix, rest, _ = strings.Cut(c[1:], "/")
	return prefix, rest
}

// secretTilde judges a path starting with a tilde prefix, expanded as
// bash expands it: ~ is the home directory of the user running the
// command, ~user that user's, ~+ the working directory, ~- the previous
// one, ~N, ~+N and ~-N the directory stack's.
func (w *walker) secretTilde(c string) (entry string, unplaced bool) {
	prefix, rest := tildeWord(c)
	switch {
	case prefix == "+":
		return w.secretRelative(orText(rest, "."))
	case prefix == "":
		return w.secretInOwnHome(rest)
	case strings.Trim(rest, "/.") == "" && !climbs(rest):
		return "", false // the directory itself, which no reader shows
	case prefix == "-" || strings.Trim(prefix, "+-0123456789") == "":
		// $OLDPWD or the directory stack: somewhere a cd went, or was
		// before the command (OLDPWD may come from the environment).
		return w.secretAbsPath(string(anyString) + "/" + rest)
	}
	if home, ok := w.userHome(prefix); ok {
		return w.secretAbsPath(home + "/" + rest)
	}
	// A home directory is anywhere: /root, /home/alice, /var/lib/pgsql, /
	// for nobody on Fedora, /dev for sys on Debian. Home-relative entries
	// (~/.aws) apply to every user's home.
	if !climbs(rest) {
		if e := w.policy.secrets.matchInHome(rest); e != "" {
			return e, false
		}
	}
	return w.secretAbsPath(string(anyString) + "/" + rest)
}

// secretInOwnHome judges a path below the home directory of the user
// running the command: on the bot's host the bot's own home; on an SSH
// host the login's home, a home like any other (a path climbing out of
// it is unplaced).
func (w *walker) secretInOwnHome(rest string) (string, bool) {
	if w.local() {
		if home, err := os.UserHomeDir(); err == nil {
			if e, u := w.secretAbsPath(home + "/" + rest); e != "" {
				return e, u
			}
		}
	}
	if climbs(rest) {
		return w.secretAbsPath(string(anyString) + "/" + rest)
	}
	return w.policy.secrets.matchInHome(rest), false
}

// userHome is the home directory of a named user on the bot's own host,
// from the user database bash reads too; elsewhere it is not known.
func (w *walker) userHome(name string) (string, bool) {
	if !w.local() || hasWildcard(name) {
		return "", false
	}
	u, err := user.Lookup(name)
	if err != nil || !strings.HasPrefix(u.HomeDir, "/") {
		return "", false
	}
	return u.HomeDir, true
}

// climbs reports whether a relative path has a ".." name: it leaves the
// directory it starts in, or a symlink's target, for a parent not known.
func climbs(rel string) bool {
	return strings.Contains("/"+rel+"/", "/../")
}

// secretRelative judges a path relative to the working directory: the
// login's home or the session's directory, and every directory a cd in
// the command line may have gone to.
func (w *walker) secretRelative(rel string) (entry string, unplaced bool) {
	for _, d := range w.cwds {
		if e, u := w.secretInDir(d, rel); e != "" {
			return e, u
		}
	}
	if climbs(rel) {
		return w.secretAbsPath(string(anyString) + "/" + rel)
	}
	return w.policy.secrets.matchInHome(rel), false
}

// secretInDir judges rel in the directory d, one of walker.cwds.
func (w *walker) secretInDir(d, rel string) (string, bool) {
	switch {
	case d == cwdUnknown:
		return w.secretAbsPath(string(anyString) + "/" + rel)
	case d == cwdHome || strings.HasPrefix(d, cwdHome+"/"):
		return w.secretInOwnHome(strings.TrimPrefix(strings.TrimPrefix(d, cwdHome), "/") + "/" + rel)
	}
	return w.secretAbsPath(d + "/" + rel)
}
