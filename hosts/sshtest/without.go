package sshtest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hidePrograms makes the sessions' PATH a folder of links to every
// program of /usr/sbin and /usr/bin but those of Options.Without, and to
// Options.Replace's stand-ins, through a ForceCommand added to
// Options.Extra.
func (s *Server) hidePrograms() error {
	if len(s.opts.Without) == 0 && len(s.opts.Replace) == 0 {
		return nil
	}
	if slices.ContainsFunc(s.opts.Extra, func(l string) bool { return strings.HasPrefix(l, "ForceCommand") }) {
		return errors.New("Options.Without and Options.Replace set a ForceCommand, and Options.Extra has one too")
	}
	bin := filepath.Join(s.Dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	for name, path := range s.opts.Replace {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			return err
		}
	}
	path := bin
	if len(s.opts.Without) == 0 {
		// Only stand-ins: the usual PATH after them, which also serves a
		// command in bubblewrap, where the folder (under a private /tmp)
		// is not.
		path += ":/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin"} {
		if len(s.opts.Without) == 0 {
			break
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if slices.Contains(s.opts.Without, e.Name()) {
				continue
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name())); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		}
	}
	s.opts.Extra = append(slices.Clone(s.opts.Extra), `ForceCommand PATH=`+path+` exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"`)
	return nil
}

// KnownHostsOf writes one known_hosts file that trusts every server of
// servers at each of its addresses (a fleet of several sshds), and returns
// its path.
func KnownHostsOf(tb TB, servers ...*Server) string {
	tb.Helper()
	var lines []byte
	for _, s := range servers {
		b, err := os.ReadFile(s.KnownHosts)
		if err != nil {
			tb.Fatalf("sshtest: %v", err)
		}
		lines = append(lines, b...)
	}
	path := filepath.Join(tb.TempDir(), "known_hosts")
	if err := os.WriteFile(path, lines, 0o600); err != nil {
		tb.Fatalf("sshtest: %v", err)
	}
	return path
}
