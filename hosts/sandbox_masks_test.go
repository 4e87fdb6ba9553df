package hosts_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// secretTree makes a directory with secrets of every kind of entry the
// policy lists, and one file that is not secret; it returns the entries
// that name the secrets, the home and working directory to use, and the
// secrets' contents.
func secretTree(t *testing.T) (entries []string, home, cwd string, secrets []string) {
	t.Helper()
	dir := t.TempDir()
	home, cwd = filepath.Join(dir, "home"), filepath.Join(dir, "cwd")
	files := map[string]string{
		"abs/shadow":                  "SECRET-ABSOLUTE",
		"absdir/inner/key":            "SECRET-IN-A-DIRECTORY",
		"glob/server.key":             "SECRET-GLOB",
		"home/.aws/credentials":       "SECRET-HOME",
		"home/.ssh/id_ed25519":        "SECRET-SSH",
		"cwd/id_rsa":                  "SECRET-BARE-NAME",
		"cwd/plain.txt":               "not a secret",
		"home/.ssh/known_hosts":       "not a secret either",
		"abs/shadow-but-not-the-same": "readable",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(content, "SECRET") {
			secrets = append(secrets, content)
		}
	}
	entries = []string{filepath.Join(dir, "abs/shadow"), filepath.Join(dir, "absdir"), filepath.Join(dir, "glob/*.key"),
		"~/.aws", "id_ed25519", "id_rsa", "/proc/*/environ"}
	return entries, home, cwd, secrets
}

// A masked secret reads nothing — Permission denied — whatever kind of
// entry names it, while the files beside it read as ever; the masks are
// the sandbox's alone (the files are intact and readable outside), and a
// bot that is not root gets the same in a user namespace.
func TestSandboxMasksSecretPaths(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	if err := hosts.SandboxIsolation(); err != nil {
		if testing.Short() {
			t.Skipf("needs root for the sandbox's mount namespace (go test -short skips this; make test runs it as root): %v", err)
		}
		t.Fatalf("this host cannot give the sandbox a mount namespace: %v", err)
	}
	for _, userns := range []bool{false, true} {
		entries, home, cwd, secrets := secretTree(t)
		l := &hosts.Local{}
		if userns {
			hosts.SetSandboxUserNS(l)
		}
		read := `for f in ` + filepath.Dir(cwd) + `/abs/* ` + filepath.Dir(cwd) + `/glob/* $HOME/.aws/credentials $HOME/.ssh/* id_rsa plain.txt; do cat "$f"; echo; done; ls ` + filepath.Dir(cwd) + `/absdir`
		res, err := l.Run(bg, localHost, read, hosts.Options{Dir: cwd, Env: []string{"HOME=" + home}, Sandbox: &hosts.Sandbox{Hidden: entries}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := string(res.Output)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("user namespace %v: the sandbox read %s: %q", userns, s, out)
			}
		}
		for _, want := range []string{"not a secret", "not a secret either", "readable", "Permission denied"} {
			if !strings.Contains(out, want) {
				t.Errorf("user namespace %v: output %q lacks %q", userns, out, want)
			}
		}
		for _, s := range secrets {
			if !readableOutside(filepath.Dir(cwd), s) {
				t.Errorf("user namespace %v: %s is not readable outside the sandbox after it", userns, s)
			}
		}
	}
}

// readableOutside reports whether some file under dir holds content.
func readableOutside(dir, content string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			found = found || string(b) == content
		}
		return nil
	})
	return found
}

// Entries become the paths that exist: absolute and globbed as they are,
// ~/ in each home, bare names in the homes, their .ssh and the working
// directory; /proc/* entries, missing paths and paths under another are
// left out.
func TestHiddenPathsExpandsTheEntries(t *testing.T) {
	t.Parallel()
	entries, home, cwd, _ := secretTree(t)
	root := filepath.Dir(cwd)
	got := hosts.HiddenPaths(append(entries, filepath.Join(root, "absdir/inner"), "/no/such/file", "~/.kube"), []string{home}, cwd)
	want := []string{filepath.Join(root, "abs/shadow"), filepath.Join(root, "absdir"), filepath.Join(cwd, "id_rsa"),
		filepath.Join(root, "glob/server.key"), filepath.Join(home, ".aws"), filepath.Join(home, ".ssh/id_ed25519")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hidden paths\n got %q\nwant %q", got, want)
	}
}

// A symbolic link named like a secret is masked only when root or the
// bot's user made it: a mask over what another user's link points to
// (/usr, say) would take the host's programs away from the sandbox.
func TestHiddenPathsFollowsOnlyTrustedLinks(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Geteuid() != 0 {
		t.Skip("needs root: links are trusted by their owner, root (go test -short skips this; make test runs it as root)")
	}
	home := t.TempDir()
	theirs, mine := filepath.Join(home, ".netrc"), filepath.Join(home, ".pgpass")
	for _, l := range []string{theirs, mine} {
		if err := os.Symlink("/usr", l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Lchown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	got := hosts.HiddenPaths([]string{"~/.netrc", "~/.pgpass"}, []string{home}, "")
	if !slices.Equal(got, []string{mine}) {
		t.Errorf("hidden paths %q, want only the bot's own link %s", got, mine)
	}
}

// Sandbox.Env reaches the command; without the mount namespace
// (simulated) the rest of the sandbox holds.
func TestSandboxAppliesEnv(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	for _, ns := range []bool{true, false} {
		l := &hosts.Local{}
		if !ns {
			hosts.SetSandboxIsolation(l, func() error { return errors.New("no namespaces here") })
		}
		sb := hosts.Sandbox{Env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat", "PYTHONSAFEPATH=1"}}
		res, err := sandboxed(t, l, `echo "$GIT_CONFIG_COUNT $GIT_CONFIG_KEY_0=$GIT_CONFIG_VALUE_0 $PYTHONSAFEPATH"`, sb)
		if err != nil || string(res.Output) != "1 core.pager=cat 1\n" {
			t.Errorf("namespace %v: %v, output %q", ns, err, res.Output)
		}
	}
}
