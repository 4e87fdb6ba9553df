package hosts_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
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
	want := `echo opsbot-pid:tok:$$ >&2; cd '/srv/it'\''s' && exec env 'A=b c' timeout -k 5s 90s sh -c 'echo '\''hi'\''' 'opsbot-run-tok'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// And it runs: sh is a stand-in for the remote login shell.
	out, err := exec.Command("sh", "-c", hosts.RemoteCommand(`printf '%s|' "$A" "$(pwd)"`, hosts.Options{Timeout: 5 * time.Second, Dir: "/tmp", Env: []string{"A=it's"}}, "tok")).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "it's|/tmp|") || !strings.HasPrefix(string(out), "opsbot-pid:tok:") {
		t.Errorf("ran to %q (%v)", out, err)
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
