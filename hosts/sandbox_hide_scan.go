package hosts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The bot's own host has the hole the SSH hosts' scan closes
// (remote_sandbox_scan.go): hiddenPaths finds bare-name secrets only in
// the homes, their .ssh and the working directory, and `grep -r x
// /srv/app` reads every server.key below. So the launcher scans, as the
// SSH hosts' wrapper does and with the same bounds, the paths the command
// may read the contents of (scanWords), and masks what it finds.

// Why a scan refused a command, in words (the launcher prints them).
var (
	errScanWholeFS = errors.New("this command reads the whole file system (/, /proc, /sys or /dev); it needs a person's approval")
	errScanBound   = errors.New("this command reads more files than the sandbox can check for secrets in time; it needs a person's approval")
)

// localScanTimeout bounds the scan of one command on the bot's host.
const localScanTimeout = 3 * time.Second

// scanned are the bare-name secrets (names, matched case-insensitively)
// under what the command argv (`bash -c COMMAND …`) run in dir may read,
// with symlinks resolved; an error when the scan refuses the command.
func scanned(names, argv []string, dir string) ([]string, error) {
	if len(names) == 0 || len(argv) < 3 || argv[1] != "-c" {
		return nil, nil
	}
	words, cwd, near := scanWords(argv[2])
	if cwd || existsIn(dir, near) {
		words = append(words, ".")
	}
	s := &treeScan{names: names, deadline: time.Now().Add(localScanTimeout), seen: map[string]bool{}}
	roots, err := s.roots(words, dir)
	if err != nil {
		return nil, err
	}
	for round := 0; round < 2 && len(roots) > 0; round++ { // the tree, then one level of symlinks
		for _, r := range roots {
			if err := s.walk(r); err != nil {
				return nil, err
			}
		}
		links := s.links
		s.links = nil
		if roots, err = s.resolve(links); err != nil {
			return nil, err
		}
	}
	return s.found, nil
}

// treeScan is one command's scan.
type treeScan struct {
	names    []string
	deadline time.Time
	seen     map[string]bool // roots already walked
	found    []string
	links    []string
}

// roots are the real paths the words name, in dir.
func (s *treeScan) roots(words []string, dir string) ([]string, error) {
	var paths []string
	for _, w := range words {
		if !filepath.IsAbs(w) && dir != "" {
			w = filepath.Join(dir, w)
		}
		paths = append(paths, glob(w)...)
	}
	return s.resolve(paths)
}

// resolve turns paths into real paths to walk, refusing a whole file
// system, and dropping those walked already.
func (s *treeScan) resolve(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !filepath.IsAbs(real) {
			continue
		}
		switch real {
		case "/", "/proc", "/sys", "/dev":
			return nil, errScanWholeFS
		}
		if !s.seen[real] {
			s.seen[real] = true
			out = append(out, real)
		}
	}
	return out, nil
}

// walk finds the secret names under root, not following symlinks (they
// are kept for the next round) nor entering kernel file systems.
func (s *treeScan) walk(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable here is unreadable to the command too
		}
		if time.Now().After(s.deadline) || len(s.found) > scanLimit {
			return errScanBound
		}
		if d.IsDir() && kernelFS(p) {
			return filepath.SkipDir
		}
		if s.matches(d.Name()) {
			s.found = append(s.found, p)
		} else if d.Type()&os.ModeSymlink != 0 {
			s.links = append(s.links, p)
		}
		return nil
	})
}

// kernelFS says whether p is under /proc, /sys or /dev.
func kernelFS(p string) bool {
	for _, k := range []string{"/proc", "/sys", "/dev"} {
		if p == k || strings.HasPrefix(p, k+"/") {
			return true
		}
	}
	return false
}

// matches says whether name is one of the secret names, in any case.
func (s *treeScan) matches(name string) bool {
	name = strings.ToLower(name)
	for _, n := range s.names {
		if ok, _ := filepath.Match(strings.ToLower(n), name); ok {
			return true
		}
	}
	return false
}

// existsIn says whether one of the relative words names a file in dir.
func existsIn(dir string, words []string) bool {
	for _, w := range words {
		if _, err := os.Lstat(filepath.Join(dir, unquoteGlob.Replace(w))); err == nil {
			return true
		}
	}
	return false
}
