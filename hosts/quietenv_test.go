package hosts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestGitStatusWritesNothing: `git status` (allowed as read-only) must
// not rewrite .git/index, which it does when its file-status cache is
// stale, on the bot's host and over SSH alike.
func TestGitStatusWritesNothing(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	for name, run := range map[string]func(cmd string) error{
		"local": func(cmd string) error {
			_, err := (&hosts.Local{}).Run(bg, hosts.Host{Name: hosts.LocalHost}, cmd, hosts.Options{}, nil)
			return err
		},
		"ssh": func(cmd string) error { _, err := p.Run(bg, h, cmd, hosts.Options{}, nil); return err },
	} {
		repo := t.TempDir()
		git := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
		git("init", "-q")
		os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644)
		git("add", "f")
		git("commit", "-q", "-m", "one")
		// A touch makes the index's cached stat of f stale.
		later := time.Now().Add(time.Hour)
		os.Chtimes(filepath.Join(repo, "f"), later, later)
		before, _ := os.Stat(filepath.Join(repo, ".git", "index"))
		if err := run("cd " + repo + " && git status --short"); err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(filepath.Join(repo, ".git", "index"))
		if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
			t.Errorf("%s: git status rewrote .git/index", name)
		}
	}
}
