package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlaceUnseen: on a file system the policy cannot see, "/.." is "/",
// and a ".." after any other name may leave a symlink's target for any
// directory, so what came before it is unknown.
func TestPlaceUnseen(t *testing.T) {
	t.Parallel()
	S := string(anyString)
	tests := []struct {
		in, want string
		unplaced bool
	}{
		{"/etc/shadow", "/etc/shadow", false},
		{"//etc/./shadow", "/etc/shadow", false},
		{"/../../etc/shadow", "/etc/shadow", false},
		{"/var/run/../etc/shadow", S + "/etc/shadow", true},
		{"/a/b/../../c", S + "/c", true},
		{"/a/..", S, true},
		{S + "/x/../y", S + "/y", true},
		{"/proc/self/cwd/../etc/shadow", S + "/etc/shadow", true},
	}
	for _, tt := range tests {
		got, unplaced := placeUnseen(tt.in)
		if got != tt.want || unplaced != tt.unplaced {
			t.Errorf("placeUnseen(%q) = %q, %v; want %q, %v", tt.in, got, unplaced, tt.want, tt.unplaced)
		}
	}
}

// TestPlaceLocalWalksLinks: on the bot's host a path is walked as the
// kernel walks it, on a real tree: ".." after a symlink leaves the
// link's target, links chain (relative and absolute), a loop ends, a
// name that does not exist leaves the rest unseen, and /proc's links are
// not followed (they lead where the bot's own process is).
func TestPlaceLocalWalksLinks(t *testing.T) {
	t.Parallel()
	dir := realDir(t)
	mkdirs(t, dir, "b/c", "real")
	symlinks(t, dir, map[string]string{
		"a":      "b/c",        // relative
		"chain1": "chain2",     // a chain of two links
		"chain2": dir + "/b/c", // absolute
		"loop1":  "loop2",      // ELOOP
		"loop2":  "loop1",
	})
	S := string(anyString)
	tests := []struct {
		in, want string
		unplaced bool
	}{
		{dir + "/a/../x", dir + "/b/x", false},
		{dir + "/chain1/../../x", dir + "/x", false},
		{dir + "/real/../x", dir + "/x", false},
		{dir + "/loop1/../x", S + "/x", true},
		{dir + "/missing/../x", S + "/x", true},
		{dir + "/missing/x", dir + "/missing/x", false},
		{"/proc/self/cwd/../x", S + "/x", true},
		{"/proc/self/root/etc/shadow", "/proc/self/root/etc/shadow", false},
	}
	if target, err := os.Readlink("/var/run"); err != nil || strings.Trim(target, "/") != "run" {
		t.Fatalf("this test needs /var/run to be a symlink to /run, as on Debian, Ubuntu and Fedora: %q %v", target, err)
	}
	tests = append(tests, struct {
		in, want string
		unplaced bool
	}{"/var/run/../etc/shadow", "/etc/shadow", false})
	for _, tt := range tests {
		got, unplaced := placeLocal(tt.in)
		if got != tt.want || unplaced != tt.unplaced {
			t.Errorf("placeLocal(%q) = %q, %v; want %q, %v", tt.in, got, unplaced, tt.want, tt.unplaced)
		}
	}
}

// realDir is a fresh directory with no symlink on its own path, so that
// what the tests expect is spelled as the kernel would reach it.
func realDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func mkdirs(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func symlinks(t *testing.T, dir string, links map[string]string) {
	t.Helper()
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}
