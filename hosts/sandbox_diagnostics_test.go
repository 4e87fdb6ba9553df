package hosts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// diagnostics are what an SRE runs first; each must end inside the
// sandbox as it ends outside, against the real host (for pid, the host's
// process the test started: the host's processes stay visible). Output
// is compared where it does not change between two runs: when the tool
// fails (it must fail the same way, e.g. no journal on this machine) and
// for the lines that name pid.
func diagnostics(pid int) []string {
	return []string{
		"ps aux", "ps -o pid=,comm= -p " + fmt.Sprint(pid), "top -bn1", "pgrep -x -f '^sleep 600.4242'",
		"ss -tln", "ss -uan", "ip addr", "ip route", "df -h", "free -m", "uptime",
		"journalctl -n 5 --no-pager", "systemctl status --no-pager", "systemctl is-system-running",
		"dmesg", "lsof -p $$", "cat /proc/loadavg /proc/meminfo",
	}
}

func TestSandboxKeepsTheDiagnosticsWorking(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	pid := startOutside(t, exec.Command("sleep", "600.4242"))
	commands := append(diagnostics(pid), logReads(t)...)
	for _, cmd := range commands {
		out, outErr := (&hosts.Local{}).Run(bg, localHost, cmd, hosts.Options{}, nil)
		in, inErr := sandboxed(t, &hosts.Local{}, cmd, hosts.Sandbox{})
		if outErr != nil || inErr != nil {
			t.Fatalf("%q: %v / %v", cmd, outErr, inErr)
		}
		switch {
		case in.ExitCode != out.ExitCode:
			t.Errorf("%q: exit %d inside, %d outside\ninside: %.300s\noutside: %.300s", cmd, in.ExitCode, out.ExitCode, in.Output, out.Output)
		case out.ExitCode != 0 && string(in.Output) != string(out.Output):
			t.Errorf("%q fails differently inside: %.300q, outside %.300q", cmd, in.Output, out.Output)
		case (strings.HasPrefix(cmd, "ps -o") || strings.HasPrefix(cmd, "pgrep")) &&
			(string(in.Output) != string(out.Output) || !strings.Contains(string(in.Output), fmt.Sprint(pid))):
			t.Errorf("%q: inside %q, outside %q; want the host's process %d", cmd, in.Output, out.Output, pid)
		}
		t.Logf("%q: exit %d inside and outside", cmd, in.ExitCode)
	}
}

// logReads reads the head of each log file in /var/log (up to a dozen).
func logReads(t *testing.T) []string {
	t.Helper()
	var cmds []string
	_ = filepath.WalkDir("/var/log", func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && len(cmds) < 12 {
			cmds = append(cmds, "head -c 200 "+p+" >/dev/null")
		}
		return nil
	})
	if len(cmds) == 0 {
		t.Fatal("no log file in /var/log to read")
	}
	return cmds
}
