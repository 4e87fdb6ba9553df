package hosts_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/opsbot/opsbot/hosts"
)

// setxattrHelper makes this test binary a setfattr(1) when run as
// `BINARY setxattr-helper FILE` (the attr package is not a test
// dependency): it sets user.opsbot on FILE and exits 0, or prints why
// not and exits 1.
const setxattrHelper = "setxattr-helper"

func init() {
	if len(os.Args) == 3 && os.Args[1] == setxattrHelper {
		if err := unix.Setxattr(os.Args[2], "user.opsbot", []byte("x"), 0); err != nil {
			fmt.Fprintf(os.Stderr, "setxattr: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// capabilityLines are the capability sets in /proc/PID/status.
var capabilityLines = []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}

// The command holds no capability — in any set — and keeps
// no_new_privs; only CAP_SYSLOG may remain, where the kernel keeps the
// ring buffer to it and the bot has it (dmesg).
func TestSandboxDropsEveryCapability(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Geteuid() != 0 {
		t.Skip("needs root: the sandbox drops root's capabilities (go test -short skips this; make test runs it as root)")
	}
	if !haveSandbox(t) {
		return
	}
	res, err := sandboxed(t, &hosts.Local{}, "cat /proc/self/status", hosts.Sandbox{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v, exit %d, output %q", err, res.ExitCode, res.Output)
	}
	status := statusFields(string(res.Output))
	syslog := fmt.Sprintf("%016x", uint64(1)<<unix.CAP_SYSLOG)
	for _, name := range capabilityLines {
		got := status[name]
		if got != "0000000000000000" && !(got == syslog && name != "CapInh" && name != "CapAmb") {
			t.Errorf("%s is %s inside the sandbox; want none (or CAP_SYSLOG alone)", name, got)
		}
	}
	if status["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs is %q, want 1", status["NoNewPrivs"])
	}
}

// statusFields parses /proc/PID/status.
func statusFields(status string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields
}

// The red team's lines, as root: metadata of files anywhere (the bot's
// own and another user's), the host's name, and the scheduling and limits
// of another process of the same user. Each is refused, and nothing
// changed.
func TestSandboxRefusesWhatRootCouldDoWithoutWriting(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Geteuid() != 0 {
		t.Skip("needs root: what it checks is what root could do (go test -short skips this; make test runs it as root)")
	}
	if !haveSandbox(t) {
		return
	}
	dir := t.TempDir()
	mine, theirs := filepath.Join(dir, "mine"), filepath.Join(dir, "theirs")
	for _, f := range []string{mine, theirs} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{mine: metadata(t, mine), theirs: metadata(t, theirs)}
	other := startOutside(t, exec.Command("sleep", "600"))
	procBefore := schedState(t, other)
	host, _ := os.Hostname()
	for _, f := range []string{mine, theirs} {
		for _, cmd := range []string{"chmod 777 %[1]s", "chown 1:1 %[1]s", "touch -d 2001-02-03 %[1]s", "%[2]s " + setxattrHelper + " %[1]s"} {
			refused(t, fmt.Sprintf(cmd, f, os.Args[0]))
		}
	}
	refused(t, "hostname opsbot-was-here")
	for _, cmd := range []string{"renice -n 7 -p %d", "prlimit --pid %d --nofile=3:3", "ionice -c 3 -p %d", "taskset -p 1 %d", "chrt -i -p 0 %d"} {
		refused(t, fmt.Sprintf(cmd, other))
	}
	for f, was := range before {
		if now := metadata(t, f); now != was {
			t.Errorf("%s changed: %s, was %s", f, now, was)
		}
	}
	if now, _ := os.Hostname(); now != host {
		t.Errorf("the host name changed to %q", now)
	}
	if now := schedState(t, other); now != procBefore {
		t.Errorf("the other process changed: %s, was %s", now, procBefore)
	}
}

// refused runs command in the sandbox and fails the test unless it
// failed.
func refused(t *testing.T, command string) {
	t.Helper()
	res, err := sandboxed(t, &hosts.Local{}, command, hosts.Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 {
		t.Errorf("%q succeeded in the sandbox: %q", command, res.Output)
	}
}

// metadata is what the red team changed of a file: mode, owner, times,
// extended attribute.
func metadata(t *testing.T, f string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(f, &st); err != nil {
		t.Fatal(err)
	}
	attr := make([]byte, 16)
	n, _ := unix.Getxattr(f, "user.opsbot", attr)
	return fmt.Sprintf("mode %o owner %d:%d mtime %d xattr %q", st.Mode, st.Uid, st.Gid, st.Mtim.Nano(), attr[:max(n, 0)])
}

// startOutside starts cmd outside any sandbox, killed at the test's end,
// and returns its pid.
func startOutside(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// schedState is pid's nice value, I/O priority, CPU affinity, scheduling
// policy and open-file limit.
func schedState(t *testing.T, pid int) string {
	t.Helper()
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
	if err != nil {
		t.Fatal(err)
	}
	ioprio, _, _ := unix.Syscall(unix.SYS_IOPRIO_GET, 1, uintptr(pid), 0)
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &cpus); err != nil {
		t.Fatal(err)
	}
	policy, _, _ := unix.Syscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
	var lim unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("nice %d ioprio %d cpus %d policy %d nofile %d", nice, ioprio, cpus.Count(), policy, lim.Cur)
}

// Other processes' environment stays closed, whether they run as the
// bot's user or as another: the same process's environ is readable from
// outside the sandbox.
func TestSandboxCannotReadOtherProcessesEnviron(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Geteuid() != 0 {
		t.Skip("needs root: the sandbox's own PID namespace (go test -short skips this; make test runs it as root)")
	}
	if !haveSandbox(t) {
		return
	}
	marker := fmt.Sprintf("OPSBOT_ENV_MARKER_%d", time.Now().UnixNano())
	same := exec.Command("sleep", "600")
	same.Env = []string{marker + "=same-user"}
	other := exec.Command("sleep", "600")
	other.Env = []string{marker + "=other-user"}
	other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	for _, pid := range []int{startOutside(t, same), startOutside(t, other)} {
		environ := fmt.Sprintf("/proc/%d/environ", pid)
		if b, err := os.ReadFile(environ); err != nil || !bytes.Contains(b, []byte(marker)) {
			t.Fatalf("outside, %s reads %q, %v; want the marker", environ, b, err)
		}
		res, err := sandboxed(t, &hosts.Local{}, "cat "+environ, hosts.Sandbox{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || strings.Contains(string(res.Output), marker) || !strings.Contains(string(res.Output), "Permission denied") {
			t.Errorf("inside, cat %s: exit %d, output %q; want Permission denied", environ, res.ExitCode, res.Output)
		}
	}
}
