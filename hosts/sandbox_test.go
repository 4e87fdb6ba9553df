package hosts_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// sandboxed runs command on the local host inside sb.
func sandboxed(t *testing.T, l *hosts.Local, command string, sb hosts.Sandbox) (hosts.Result, error) {
	t.Helper()
	return l.Run(bg, localHost, command, hosts.Options{Sandbox: &sb}, nil)
}

// haveSandbox reports whether this kernel runs the sandbox. Where it does
// not, it checks the fallback instead (a sandboxed command is refused and
// does not run), so that the calling test asserts something real either
// way: the caller then returns.
func haveSandbox(t *testing.T) bool {
	t.Helper()
	if hosts.SandboxSupport() == nil {
		return true
	}
	marker := filepath.Join(t.TempDir(), "ran")
	_, err := sandboxed(t, &hosts.Local{}, "touch "+marker, hosts.Sandbox{})
	if !errors.Is(err, hosts.ErrNoSandbox) {
		t.Errorf("without Landlock, a sandboxed command gave %v, want ErrNoSandbox", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("without Landlock, the sandboxed command ran anyway")
	}
	return false
}

// A command that runs without a person cannot write outside its private
// directory: the kernel answers EROFS ("Read-only file system") in the
// sandbox's mount namespace, and Landlock's EACCES ("Permission denied")
// where there is none.
func TestSandboxRefusesWritesOutsideItsDirectory(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	for _, ns := range []bool{true, false} {
		refusesWritesOutside(t, ns)
	}
}

// refusesWritesOutside is TestSandboxRefusesWritesOutsideItsDirectory with
// or without the mount namespace.
func refusesWritesOutside(t *testing.T, ns bool) {
	t.Helper()
	l, want := &hosts.Local{}, "Read-only file system"
	if ns && hosts.SandboxIsolation() != nil { // this host cannot: Landlock alone
		want = "Permission denied"
	}
	if !ns {
		hosts.SetSandboxIsolation(l, func() error { return errors.New("no namespaces here") })
		want = "Permission denied"
	}
	dir := t.TempDir() // under /tmp, but not the command's own directory
	for _, cmd := range []string{"touch %s/x", "echo x > %s/x", "mkdir %s/x", "ln -s /etc/passwd %s/x"} {
		res, err := sandboxed(t, l, fmt.Sprintf(cmd, dir), hosts.Sandbox{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || !strings.Contains(string(res.Output), want) {
			t.Errorf("namespace %v: %q: exit %d, output %q; want a failure with %s", ns, cmd, res.ExitCode, res.Output, want)
		}
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := sandboxed(t, l, "rm -f "+victim+"; : > "+victim, hosts.Sandbox{})
	if err != nil || res.ExitCode == 0 {
		t.Errorf("rm and truncate: %v, exit %d", err, res.ExitCode)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the file outside the sandbox was changed: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the sandboxed commands left %d entries in %s, want only the victim", len(entries), dir)
	}
}

// Its own $TMPDIR is writable, /dev/null too, and the directory is gone
// once the command has ended.
func TestSandboxWritesInsideItsOwnDirectory(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	l := &hosts.Local{SandboxDir: t.TempDir()}
	res, err := sandboxed(t, l, `echo hi > "$TMPDIR/f" && mkdir "$TMPDIR/d" && mv "$TMPDIR/f" "$TMPDIR/d/g" && cat "$TMPDIR/d/g" && echo gone >/dev/null && echo "$TMPDIR"`, hosts.Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Output)), "\n")
	if res.ExitCode != 0 || len(lines) != 2 || lines[0] != "hi" {
		t.Fatalf("exit %d, output %q; want hi and the directory", res.ExitCode, res.Output)
	}
	if !strings.HasPrefix(lines[1], l.SandboxDir) {
		t.Errorf("TMPDIR %s is not under SandboxDir %s", lines[1], l.SandboxDir)
	}
	if _, err := os.Stat(lines[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private directory is still there after the command: %v", err)
	}
}

// No TCP connect, not even to loopback, unless the policy allowed that
// destination's port.
func TestSandboxRefusesConnectUnlessThePortIsAllowed(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)

	res, err := sandboxed(t, &hosts.Local{}, connect, hosts.Sandbox{ConnectPorts: []uint16{uint16(port + 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(string(res.Output), "Permission denied") {
		t.Errorf("connect with its port not allowed: exit %d, output %q; want Permission denied", res.ExitCode, res.Output)
	}
	// The listener's first connection must be this probe, not the
	// sandboxed command's.
	probe, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if first := accept(t, ln); first != probe.LocalAddr().String() {
		t.Errorf("the listener was reached by %s before the probe %s", first, probe.LocalAddr())
	}

	res, err = sandboxed(t, &hosts.Local{}, connect, hosts.Sandbox{ConnectPorts: []uint16{uint16(port)}})
	if err != nil || res.ExitCode != 0 || string(res.Output) != "connected\n" {
		t.Errorf("connect with its port allowed: %v, exit %d, output %q", err, res.ExitCode, res.Output)
	}
	accept(t, ln)
}

// accept returns the remote address of the listener's next connection.
func accept(t *testing.T, ln net.Listener) string {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.RemoteAddr().String()
}

// What a person approved runs as before: no Options.Sandbox, no
// confinement.
func TestApprovedCommandIsNotSandboxed(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approved")
	res, err := (&hosts.Local{}).Run(bg, localHost, "touch "+file, hosts.Options{}, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v, exit %d, output %q", err, res.ExitCode, res.Output)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the approved command did not write its file: %v", err)
	}
}

// A kernel without Landlock (simulated): a sandboxed command is refused
// and does not run, unless best effort was chosen, which runs it as is.
func TestSandboxMissingRefusesOrRunsBestEffort(t *testing.T) {
	t.Parallel()
	noLandlock := func() error { return errors.New("this kernel has no Landlock") }
	for _, bestEffort := range []bool{false, true} {
		l := &hosts.Local{SandboxBestEffort: bestEffort}
		hosts.SetSandboxProbe(l, noLandlock)
		file := filepath.Join(t.TempDir(), "ran")
		res, err := sandboxed(t, l, "touch "+file, hosts.Sandbox{})
		_, statErr := os.Stat(file)
		switch {
		case !bestEffort && (!errors.Is(err, hosts.ErrNoSandbox) || statErr == nil):
			t.Errorf("required: error %v, file made %v; want ErrNoSandbox and nothing run", err, statErr == nil)
		case bestEffort && (err != nil || res.ExitCode != 0 || statErr != nil):
			t.Errorf("best effort: %v, exit %d, stat %v; want it run unconfined", err, res.ExitCode, statErr)
		}
	}
}

// The sandbox keeps what the local runner promises: a pty, streamed
// output, and the whole group killed on cancel.
func TestSandboxKeepsPTYAndCancel(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	res, err := (&hosts.Local{}).Run(bg, localHost, "test -t 1 && echo tty", hosts.Options{PTY: true, Sandbox: &hosts.Sandbox{}}, nil)
	if err != nil || string(res.Output) != "tty\r\n" {
		t.Errorf("pty: %v, output %q", err, res.Output)
	}
	sleep := uniqueSleep()
	ctx, cancel := context.WithCancel(bg)
	run := startSleep(t, sleep, func(cmd string, onChunk func(hosts.Chunk)) error {
		_, err := (&hosts.Local{}).Run(ctx, localHost, cmd, hosts.Options{Sandbox: &hosts.Sandbox{}}, onChunk)
		return err
	})
	procs := findRunning(t, sleep)
	cancel()
	if err := run.wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run error %v, want context.Canceled", err)
	}
	awaitExit(t, sleep, procs)
}
