package sshtest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hidePrograms makes the sessions' PATH a folder of links to every
// program of /usr/sbin and /usr/bin but those of Options.Without, through
// a ForceCommand added to Options.Extra.
func (s *Server) hidePrograms() error {
	if len(s.opts.Without) == 0 {
		return nil
	}
	if slices.ContainsFunc(s.opts.Extra, func(l string) bool { return strings.HasPrefix(l, "ForceCommand") }) {
		return errors.New("Options.Without sets a ForceCommand, and Options.Extra has one too")
	}
	bin := filepath.Join(s.Dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin"} {
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
	s.opts.Extra = append(slices.Clone(s.opts.Extra), `ForceCommand PATH=`+bin+` exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"`)
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
