package hosts_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/policy"
)

// A quoted word must reach the command exactly, through a real sh.
func TestShellQuoteRoundTrips(t *testing.T) {
	t.Parallel()
	words := []string{"", "plain", "it's", "''", `"double"`, `$HOME $(id) ` + "`id`", `back\slash`, "new\nline", "tab\there", "semi;colon && or || pipe |", "glob * ? [a]", "ünïcødé", "'; rm -rf / #"}
	for _, w := range words {
		out, err := exec.Command("sh", "-c", "printf %s "+hosts.ShellQuote(w)).Output()
		if err != nil || string(out) != w {
			t.Errorf("%q came back as %q (%v)", w, out, err)
		}
	}
}

func TestRemoteCommandShape(t *testing.T) {
	t.Parallel()
	got := hosts.RemoteCommand("echo 'hi'", hosts.Options{Timeout: 90 * time.Second, Dir: "/srv/it's", Env: []string{"A=b c"}}, "tok")
	want := `echo opsbot-pid:tok:$$ >&2; command -v bash >/dev/null 2>&1 || { echo 'opsbot: bash is required on this host: commands run with bash -c' >&2; exit 126; }; ` +
		`cd '/srv/it'\''s' && exec env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS -u POSIXLY_CORRECT 'GIT_OPTIONAL_LOCKS=0' 'A=b c' timeout -k 5s 90s bash -c 'echo '\''hi'\''' 'opsbot-run-tok'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// And it runs: sh is a stand-in for the remote login shell.
	out, err := exec.Command("sh", "-c", hosts.RemoteCommand(`printf '%s|' "$A" "$(pwd)"`, hosts.Options{Timeout: 5 * time.Second, Dir: "/tmp", Env: []string{"A=it's"}}, "tok")).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "it's|/tmp|") || !strings.HasPrefix(string(out), "opsbot-pid:tok:") {
		t.Errorf("ran to %q (%v)", out, err)
	}
}

// dialectSplit is a line bash reads as one echo and dash as three
// commands: dash has no $'…', so its quotes pair up differently. The
// policy parses as bash; the command must run under bash too.
const dialectSplit = `echo $'\'' ' ; touch %s ; echo ' \'`

// The command runs under bash whatever the login shell and /bin/sh are:
// under each real POSIX shell installed here as the login shell, the
// dialect-split line only echoes.
func TestRemoteCommandRunsUnderBashWhateverTheLoginShell(t *testing.T) {
	t.Parallel()
	for _, login := range []string{"/bin/sh", "/bin/dash", "/bin/bash"} {
		victim := filepath.Join(t.TempDir(), "victim")
		cmd := fmt.Sprintf(dialectSplit, victim)
		out, err := exec.Command(login, "-c", hosts.RemoteCommand(cmd, hosts.Options{Timeout: 5 * time.Second}, "tok")).Output()
		if err != nil {
			t.Fatalf("%s: %v", login, err)
		}
		if _, err := os.Stat(victim); err == nil {
			t.Errorf("login shell %s: the hidden command ran (the victim file exists)", login)
		}
		if want := "'  ; touch " + victim + " ; echo  '\n"; string(out) != want {
			t.Errorf("login shell %s: printed %q, want bash's reading %q", login, out, want)
		}
	}
}

// A host without bash refuses with a clear message and status 126; the
// command is not run by some other shell.
func TestRemoteCommandWithoutBashSaysSo(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	for _, tool := range []string{"timeout", "env", "touch"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(t.TempDir(), "victim")
	c := exec.Command("/bin/dash", "-c", hosts.RemoteCommand("touch "+victim, hosts.Options{Timeout: 5 * time.Second}, "tok"))
	c.Env = []string{"PATH=" + bin}
	var stderr strings.Builder
	c.Stderr = &stderr
	err := c.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 {
		t.Errorf("exit %v, want status 126", err)
	}
	if !strings.Contains(stderr.String(), "opsbot: bash is required on this host") {
		t.Errorf("stderr %q does not say bash is required", stderr.String())
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("the command ran without bash")
	}
}

// End to end through a real sshd, whose login shell runs the wrapper: the
// dialect-split line only echoes.
func TestPoolRunsCommandsUnderBash(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	victim := filepath.Join(t.TempDir(), "victim")
	res, err := p.Run(bg, h, fmt.Sprintf(dialectSplit, victim)+`; echo "${BASH_VERSION%%.*}"`, hosts.Options{}, nil)
	if err != nil || !res.OK() {
		t.Fatalf("run: %v %+v", err, res)
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("the hidden command ran on the host (the victim file exists)")
	}
	if got, want := string(res.Output), "'  ; touch "+victim+" ; echo  '\n5\n"; got != want {
		t.Errorf("output %q, want %q: bash's reading, then bash's major version", got, want)
	}
}

// A variable that makes bash run a file at start-up or parse differently
// is refused: the command would not be the one the policy read.
func TestOptionsRejectShellStartupEnv(t *testing.T) {
	t.Parallel()
	for _, kv := range []string{"BASH_ENV=/tmp/x", "ENV=/tmp/x", "SHELLOPTS=posix", "BASHOPTS=extglob", "POSIXLY_CORRECT=1"} {
		if _, err := (&hosts.Local{}).Run(bg, localHost, "true", hosts.Options{Env: []string{kv}}, nil); err == nil {
			t.Errorf("env %q accepted", kv)
		}
	}
}

func TestOptionsRejectBadEnv(t *testing.T) {
	t.Parallel()
	for _, kv := range []string{"NOEQUALS", "=v", "1A=v", "A-B=v", "A B=v", "A;rm=v"} {
		_, err := (&hosts.Local{}).Run(bg, localHost, "true", hosts.Options{Env: []string{kv}}, nil)
		if err == nil {
			t.Errorf("env %q accepted", kv)
		}
	}
}

// The policy parses commands in the dialect of the shell that runs them.
func TestPolicyParsesInTheRunnerShellsDialect(t *testing.T) {
	t.Parallel()
	if got := policy.ShellDialect.String(); got != hosts.RunnerShell {
		t.Errorf("the policy parses commands as %s, but they run under %s", got, hosts.RunnerShell)
	}
}
