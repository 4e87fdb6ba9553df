package policy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileRepo makes a git repository whose config names a command that
// touches a marker file in every key that names one for the whole
// repository, and in the per-path keys the classifier judges (textconv,
// diff drivers), through include.path and includeIf too. It returns the
// repository and the marker directory.
func hostileRepo(t *testing.T) (repo, marks string) {
	t.Helper()
	dir := t.TempDir()
	repo, marks = filepath.Join(dir, "repo"), filepath.Join(dir, "marks")
	hooks := filepath.Join(dir, "hooks")
	for _, d := range []string{repo, marks, hooks} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, nil, "init", "-q", ".")
	git(t, repo, nil, "config", "user.email", "a@example.com")
	git(t, repo, nil, "config", "user.name", "a")
	writeFile(t, filepath.Join(repo, "a.txt"), "hello\n")
	writeFile(t, filepath.Join(repo, ".gitattributes"), "* diff=evil\n")
	git(t, repo, nil, "add", ".")
	git(t, repo, nil, "commit", "-qm", "one")
	writeFile(t, filepath.Join(repo, "a.txt"), "hello\nworld\n")
	mark := func(name string) string { return "touch " + filepath.Join(marks, name) + "; cat" }
	for _, k := range []string{"core.fsmonitor", "core.pager", "core.sshCommand", "core.editor", "core.askPass", "core.gitProxy",
		"sequence.editor", "gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program", "diff.external",
		"diff.evil.textconv", "diff.evil.command", "credential.helper", "pager.log", "pager.status", "pager.diff", "pager.show",
		"pager.blame", "pager.grep"} {
		git(t, repo, nil, "config", k, mark(k))
	}
	git(t, repo, nil, "config", "log.showSignature", "true")
	git(t, repo, nil, "config", "alias.st", "!"+mark("alias"))
	git(t, repo, nil, "config", "remote.origin.url", repo)
	git(t, repo, nil, "config", "remote.origin.uploadpack", "touch "+filepath.Join(marks, "uploadpack")+"; git-upload-pack")
	git(t, repo, nil, "config", "protocol.file.allow", "always")
	git(t, repo, nil, "config", "core.hooksPath", hooks)
	for _, h := range []string{"post-index-change", "reference-transaction", "post-checkout"} {
		writeFile(t, filepath.Join(hooks, h), "#!/bin/sh\n"+mark("hook-"+h)+"\n")
		if err := os.Chmod(filepath.Join(hooks, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inc := filepath.Join(dir, "inc.cfg")
	writeFile(t, inc, "[core]\n\tfsmonitor = "+mark("include")+"\n[credential]\n\thelper = "+mark("include-credential")+"\n")
	git(t, repo, nil, "config", "include.path", inc)
	git(t, repo, nil, "config", "includeIf.gitdir:"+repo+"/.path", inc)
	return repo, marks
}

// isolatedEnv is the process environment without the host's git
// configuration, so that only the repository's config is in play.
func isolatedEnv(t *testing.T) []string {
	home := t.TempDir()
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

// git runs git in dir with extra environment after the isolated one and
// returns its output; a failure is only an error of the setup when env
// is nil.
func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hostile config's command must not hang the test
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(isolatedEnv(t), env...)
	cmd.Stdin = strings.NewReader("protocol=https\nhost=example.com\n\n")
	out, err := cmd.CombinedOutput()
	if err != nil && env == nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// markers lists and removes the marker files.
func markers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// unattendedGitReads are the git command lines the policy allows that
// read what a hostile config could turn into a command.
var unattendedGitReads = []string{
	"git status", "git status --short", "git log", "git log --oneline -5", "git log -p --no-textconv", "git log --stat",
	"git log --show-signature", "git diff --no-ext-diff --no-textconv", "git diff --stat", "git diff HEAD --name-only",
	"git diff --cached --no-ext-diff --no-textconv", "git show --no-textconv", "git show --stat", "git show HEAD:a.txt",
	"git blame --no-textconv a.txt", "git grep hello", "git grep hello HEAD", "git cat-file -p HEAD:a.txt", "git ls-files",
	"git ls-tree HEAD", "git describe --always --dirty", "git diff-files -p", "git diff-index -p HEAD", "git diff-tree -p HEAD",
	"git whatchanged", "git shortlog -n HEAD", "git rev-parse HEAD", "git check-attr -a a.txt", "git branch -a", "git tag -l",
	"git remote -v", "git stash list", "git config --get core.pager", "git verify-commit HEAD", "git count-objects -v",
}

// TestUnattendedEnvShutsGitConfigCommands: in a repository whose config
// names a command in every key that can name one, every git read the
// policy allows runs none of them with UnattendedEnv, on real git; the
// same reads without it do run some (the repository is hostile indeed),
// and the spellings that ask for a per-path command are not allowed.
func TestUnattendedEnvShutsGitConfigCommands(t *testing.T) {
	t.Parallel()
	repo, marks := hostileRepo(t)
	p := defaultPolicy(t)
	env := UnattendedEnv()
	for _, line := range unattendedGitReads {
		if d := p.Check(Target{Host: "local"}, line); d.Action != Allow {
			t.Errorf("%q: %s, want allow: %s", line, d.Action, strings.Join(d.Reasons, "; "))
		}
		out := git(t, repo, env, strings.Fields(line)[1:]...)
		if got := markers(t, marks); len(got) > 0 {
			t.Errorf("%q with UnattendedEnv ran the config's commands %v\n%s", line, got, out)
		}
	}
	// Needing approval, these still run nothing of the config's unattended.
	for _, args := range [][]string{{"credential", "fill"}, {"ls-remote", "origin"}, {"ls-remote", repo}} {
		git(t, repo, env, args...)
		if got := markers(t, marks); len(got) > 0 {
			t.Errorf("git %s with UnattendedEnv ran %v", strings.Join(args, " "), got)
		}
	}
	git(t, repo, []string{}, "ls-remote", "origin")
	git(t, repo, []string{}, "status")
	git(t, repo, []string{}, "diff")
	git(t, repo, []string{}, "log", "-p")
	if got := strings.Join(markers(t, marks), " "); !strings.Contains(got, "include") || !strings.Contains(got, "diff.evil.command") ||
		!strings.Contains(got, "diff.evil.textconv") || !strings.Contains(got, "uploadpack") {
		t.Errorf("without UnattendedEnv the hostile config ran only %q: the test proves nothing", got)
	}
	// Plain git diff, log -p, show and blame run textconv and git diff
	// runs diff.external even so: no environment shuts them without
	// breaking every diff, and they are left to the sandbox (see
	// UnattendedEnv). Asked for on the command line, they need approval.
	for _, line := range []string{"git diff --ext-diff", "git log -p --textconv", "git cat-file --textconv HEAD:a.txt",
		"git grep --textconv hello", "git st", "git ls-remote origin", "git -c core.pager=x log"} {
		if d := p.Check(Target{Host: "local"}, line); d.Action == Allow {
			t.Errorf("%q is allowed, but runs a command the repository's config names", line)
		}
	}
}

// TestUnattendedEnvKeepsGitOutput: the overrides change no output of an
// ordinary repository (an empty diff.external would print nothing).
func TestUnattendedEnvKeepsGitOutput(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	git(t, repo, nil, "init", "-q", ".")
	writeFile(t, filepath.Join(repo, "a.txt"), "hello\n")
	git(t, repo, nil, "add", ".")
	git(t, repo, nil, "-c", "user.email=a@example.com", "-c", "user.name=a", "commit", "-qm", "one")
	writeFile(t, filepath.Join(repo, "a.txt"), "hello\nworld\n")
	for _, args := range [][]string{{"diff"}, {"status", "--short"}, {"log", "-p"}, {"show", "--stat"}} {
		plain, unattended := git(t, repo, nil, args...), git(t, repo, UnattendedEnv(), args...)
		if plain != unattended || plain == "" {
			t.Errorf("git %s: %q with UnattendedEnv, %q without", strings.Join(args, " "), unattended, plain)
		}
	}
}

// TestUnattendedEnvPythonSafePath: python3 -m json.tool in a directory
// holding json.py imports it, but not with UnattendedEnv (python 3.11+)
// nor with -I, the spelling the policy allows.
func TestUnattendedEnvPythonSafePath(t *testing.T) {
	t.Parallel()
	dir, marks := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "json.py"), "open("+pyQuote(filepath.Join(marks, "json.py-ran"))+", 'w').close()\nraise SystemExit(0)\n")
	run := func(env []string, args ...string) string {
		cmd := exec.Command("python3", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, append(os.Environ(), env...), strings.NewReader(`{"a": 1}`)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	run(nil, "-m", "json.tool")
	if got := markers(t, marks); len(got) == 0 {
		t.Fatal("python3 -m json.tool did not import ./json.py: the test proves nothing")
	}
	if out := run(UnattendedEnv(), "-m", "json.tool"); len(markers(t, marks)) > 0 || !strings.Contains(out, `"a": 1`) {
		t.Errorf("with UnattendedEnv python3 -m json.tool imported ./json.py or printed %q", out)
	}
	if out := run(nil, "-I", "-m", "json.tool"); len(markers(t, marks)) > 0 || !strings.Contains(out, `"a": 1`) {
		t.Errorf("python3 -I -m json.tool imported ./json.py or printed %q", out)
	}
	p := defaultPolicy(t)
	for line, want := range map[string]Action{"python3 -I -m json.tool": Allow, "python3 -Im json.tool x.json": Allow,
		"python3 -m json.tool": Approve, "cd /tmp && python3 -m json.tool x.json": Approve} {
		if d := p.Check(Target{Host: "web-1"}, line); d.Action != want {
			t.Errorf("%q: %s, want %s", line, d.Action, want)
		}
	}
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
