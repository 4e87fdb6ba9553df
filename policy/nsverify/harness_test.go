package nsverify

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// newSandbox builds a sandbox in a test directory, failing where the
// harness cannot run (CI runs as root with make test-deps), skipping only
// under go test -short.
func newSandbox(t testing.TB) *Sandbox {
	t.Helper()
	if err := Available(); err != nil {
		if testing.Short() {
			t.Skipf("%v (go test -short skips this; make test runs it)", err)
		}
		t.Fatal(err)
	}
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runAll runs commands a few at a time and returns their reports in
// order.
func runAll(t *testing.T, s *Sandbox, commands []string) []Report {
	t.Helper()
	reports := make([]Report, len(commands))
	errs := make([]error, len(commands))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				reports[i], errs[i] = s.Run(t.Context(), commands[i])
			}
		})
	}
	for i := range commands {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return reports
}

// TestHarnessSeesWhatChanges: the harness reports each kind of change it
// exists to catch, and nothing for commands that only read.
func TestHarnessSeesWhatChanges(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	cases := []struct {
		command string
		want    string // a substring of the report; "" means harmless
	}{
		{"cat /etc/hosts /var/log/syslog; ls -la /root /srv/victim; git status; git log --oneline", ""},
		{"echo > /dev/tcp/127.0.0.1/6379", ""}, // loopback: allowed, and recorded
		{"touch /etc/nologin", "changed /etc/nologin: absent → regular empty file"},
		{"rm -rf /srv/victim", "changed /srv/victim: directory"},
		{"rm -rf /srv/victim && mkdir /srv/victim", "changed /srv/victim: directory"},
		{"chmod 600 /etc/hosts", "changed /etc/hosts: regular file 644"},
		{"echo more >> /var/log/syslog", "changed /var/log/syslog"},
		{"ln -s /etc/passwd /tmp/link", "changed /tmp/link: absent → symbolic link"},
		{"echo x > /dev/sda", "changed /dev/sda: absent"},
		{"(sleep 0.1; touch /tmp/late) & disown", "changed /tmp/late"},
		{"git stash --all", "changed /root/data.txt"},
		{"echo > /dev/tcp/198.51.100.7/80", "egress: connect AF_INET 198.51.100.7:80"},
		{"getent hosts example.com", "192.0.2.53:53"},
		{"ip link set lo down", "network namespace changed"},
		{"date -s 2001-01-01", "privileged call: clock_settime"},
		{"hostname pwned", "privileged call: sethostname"},
		// Known side effects pass only as new empty directories at
		// their exact paths.
		{"top -b -n 1 >/dev/null; java -version", ""},
		{"mkdir -p /root/.config/procps/x", "changed /root/.config/procps: absent"},
		{"mkdir /tmp/hsperfdata_root && touch /tmp/hsperfdata_root/1", "changed /tmp/hsperfdata_root: absent"},
		{"rm /tmp/out.json; mkdir /tmp/hsperfdata_root", `removed ["out.json"]`},
		{"mkdir -p /root/.config/x", "changed /root/.config: absent"},
	}
	var commands []string
	for _, c := range cases {
		commands = append(commands, c.command)
	}
	for i, r := range runAll(t, s, commands) {
		c := cases[i]
		switch {
		case c.want == "" && !r.Harmless():
			t.Errorf("reported a change for a command that only reads:\n%s", r)
		case c.want != "" && (r.Harmless() || !strings.Contains(r.String(), c.want)):
			t.Errorf("want %q in the report of %q, got:\n%s", c.want, c.command, r)
		}
	}
}

// TestLoopbackIsRecorded: a connect to loopback is not egress, but the
// report keeps it.
func TestLoopbackIsRecorded(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	r, err := s.Run(context.Background(), "curl -s http://127.0.0.1:6379/ ; echo > /dev/tcp/::1/22")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Harmless() || len(r.Loopback) < 2 {
		t.Errorf("want a harmless run with two loopback connects, got %d:\n%s", len(r.Loopback), r)
	}
}

// TestCommandGetsOnlyStdio: a descriptor the caller leaked past exec (as
// a fuzz worker leaks its pipes to the coordinator) does not reach the
// command, which could otherwise read or write through it.
func TestCommandGetsOnlyStdio(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no O_CLOEXEC: inherited by every exec
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	s := newSandbox(t)
	r, err := s.Run(t.Context(), "ls /proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stdout != "0\n1\n2\n3\n" { // 3 is ls's own handle on the directory
		t.Errorf("the command's descriptors: %q, want stdin, stdout and stderr only", r.Stdout)
	}
}
