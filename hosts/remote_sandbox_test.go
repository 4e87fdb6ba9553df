package hosts_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// unapproved are the options of a command no person approved, as the bot
// gives them: the sandbox marker and the secret paths to mask.
func unapproved(hidden ...string) hosts.Options {
	return hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: hidden}
}

// scratchDir is a directory on the host's root file system (not under
// /tmp, which the sandbox replaces with a private one), removed at the
// end of the test.
func scratchDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "opsbot-rsandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func mustRun(t *testing.T, p *hosts.Pool, h hosts.Host, cmd string, opts hosts.Options) hosts.Result {
	t.Helper()
	res, err := p.Run(bg, h, cmd, opts, nil)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return res
}

// TestRemoteSandboxProbe: the loopback host has a working bubblewrap, and
// the pool says so.
func TestRemoteSandboxProbe(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	kind, why, err := p.RemoteSandbox(bg, h)
	if err != nil || kind != hosts.RemoteBwrap || why != "" {
		t.Fatalf("RemoteSandbox = %q, %q, %v; want bwrap", kind, why, err)
	}
	if err := p.MissingSandbox(bg, h); err != nil {
		t.Fatalf("MissingSandbox = %v on a host with bubblewrap", err)
	}
}

// TestRemoteSandboxDiagnostics runs the commands an SRE diagnoses a host
// with inside the sandbox, against the real host: each ends as it does
// outside it, and what must show the host (its processes, its disks, its
// logs) does.
func TestRemoteSandboxDiagnostics(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	me := strconv.Itoa(os.Getpid()) // the test process: a process of the host, outside the sandbox
	tests := []struct {
		cmd  string
		want string // in the sandboxed output; empty: only the exit code is compared
	}{
		{"ps -e -o pid=", me},
		{"top -bn1 | head -20", "load average"},
		{"pgrep -f " + filepath.Base(os.Args[0]), me},
		{"ss -tan", "State"},
		{"ip addr", "lo"},
		{"df -P /", "/"},
		{"free -m", "Mem:"},
		{"journalctl -n 5 --no-pager", ""},
		{"systemctl status --no-pager", ""},
		{"dmesg | tail -3", ""},
		{"lsof -p " + me + " | head -3", "COMMAND"},
		{"tail -n 3 /var/log/dpkg.log", ""},
		{"ls /var/log", "dpkg.log"},
		{"uptime", "load average"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			in := mustRun(t, p, h, tt.cmd, unapproved())
			out := mustRun(t, p, h, outsideSandbox(tt.cmd), hosts.Options{})
			if in.ExitCode != out.ExitCode {
				t.Errorf("exit %d in the sandbox, %d outside it\nin: %s\nout: %s", in.ExitCode, out.ExitCode, in.Output, out.Output)
			}
			if !strings.Contains(string(in.Output), tt.want) {
				t.Errorf("the sandbox's output lacks %q:\n%s", tt.want, in.Output)
			}
		})
	}
}

// outsideSandbox runs cmd as the sandbox's process would be but for the
// sandbox's mounts and namespaces: without capabilities, for the same
// rights (dmesg under kernel.dmesg_restrict needs CAP_SYSLOG in both).
func outsideSandbox(cmd string) string {
	return "setpriv --inh-caps=-all --bounding-set=-all -- bash -c " + shellQuote(cmd)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestRemoteSandboxWritesNothing: the root file system is read-only, /tmp
// is private, and other processes' environments are closed even to root.
func TestRemoteSandboxWritesNothing(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := scratchDir(t)
	res := mustRun(t, p, h, "touch "+dir+"/x; chmod 777 "+dir+"; echo private > /tmp/opsbot-private-"+filepath.Base(dir)+" && cat /tmp/opsbot-private-"+filepath.Base(dir), unapproved())
	if _, err := os.Stat(dir + "/x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("touch in the sandbox wrote %s/x (stat: %v); output %s", dir, err, res.Output)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() == 0o777 {
		t.Errorf("chmod in the sandbox changed %s: %v %v", dir, fi.Mode(), err)
	}
	if !strings.Contains(string(res.Output), "private") {
		t.Errorf("the private /tmp is not writable: %s", res.Output)
	}
	if _, err := os.Stat("/tmp/opsbot-private-" + filepath.Base(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sandbox's /tmp is the host's: %v", err)
	}
	env := mustRun(t, p, h, "cat /proc/"+strconv.Itoa(os.Getpid())+"/environ; cat /proc/1/environ", unapproved())
	if env.ExitCode == 0 || strings.Contains(string(env.Output), "PATH=") {
		t.Errorf("another process's environ was readable (exit %d): %q", env.ExitCode, env.Output)
	}
}

// TestRemoteSandboxMasksSecrets: the secret paths that exist are masked
// (a file, a directory, a wildcard), and file names that are shell code
// stay names.
func TestRemoteSandboxMasksSecrets(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := scratchDir(t)
	write := func(name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("SECRET-"+name+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hostile := []string{"$(touch " + dir + "/pwned).key", "`touch " + dir + "/pwned`.key", "a'b; touch " + dir + "/pwned #.key", "-rf .key", "new\nline.key"}
	for _, n := range append([]string{"shadow", "keys/one", "keys/two", "plain.txt"}, hostile...) {
		write(n)
	}
	if err := os.Symlink(filepath.Join(dir, "shadow"), filepath.Join(dir, "link-to-shadow")); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, p, h, "cd "+dir+" && cat shadow keys/one keys/two ./*.key link-to-shadow plain.txt; ls keys", unapproved(dir+"/shadow", dir+"/keys", dir+"/*.key", dir+"/link-to-shadow"))
	if strings.Count(string(res.Output), "SECRET-") != 1 || !strings.Contains(string(res.Output), "SECRET-plain.txt") {
		t.Errorf("masked secrets were read, or the plain file was not:\n%s", res.Output)
	}
	if _, err := os.Stat(dir + "/pwned"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hostile file name ran as shell: %v", err)
	}
}

// TestRemoteSandboxLeavesNothingRunning: a setsid child of the command
// dies when it returns, and a cancel kills the whole sandbox.
func TestRemoteSandboxLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	sleep := uniqueSleep()
	res := mustRun(t, p, h, "setsid "+sleep+" > /dev/null 2>&1 < /dev/null & nohup "+sleep+" >/dev/null 2>&1 & echo started", unapproved())
	if !strings.Contains(string(res.Output), "started") {
		t.Fatalf("output %q", res.Output)
	}
	// bwrap exits as soon as its init reports the command's status; the
	// kernel's kill of the rest of the namespace lands as it does, so
	// the children are awaited (they sleep 600 s: only the kill ends them).
	waitGone(t, sleep)

	ctx, cancel := context.WithCancel(bg)
	sleep = uniqueSleep()
	b := startSleep(t, sleep, poolRun(ctx, p, h, unapproved()))
	procs := findRunning(t, sleep)
	cancel()
	if err := b.wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	awaitExit(t, sleep, procs)
}

// TestRemoteSandboxDeadline: the deadline still stops a sandboxed command
// and is reported as such.
func TestRemoteSandboxDeadline(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	opts := unapproved()
	opts.Timeout = 500 * time.Millisecond
	res := mustRun(t, p, h, "sleep 30", opts)
	if !res.TimedOut {
		t.Errorf("result %+v, want timed out", res)
	}
}

// TestRemoteSandboxNetwork: no connection leaves the sandbox unless the
// policy allowed the command a destination; then the host's network is
// its own.
func TestRemoteSandboxNetwork(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) + " && echo connected"
	if res := mustRun(t, p, h, cmd, unapproved()); res.ExitCode == 0 || strings.Contains(string(res.Output), "connected") {
		t.Errorf("a sandboxed command with no destination connected: %s", res.Output)
	}
	opts := unapproved()
	opts.Sandbox.ConnectPorts = []uint16{uint16(port)}
	if res := mustRun(t, p, h, cmd, opts); res.ExitCode != 0 {
		t.Errorf("a command allowed a destination could not connect: %s", res.Output)
	}
}

// startHostWithoutBwrap starts an sshd whose sessions find every program
// but bwrap (sshtest.Options.Without), and returns the folder its PATH
// names.
func startHostWithoutBwrap(t *testing.T) (*sshtest.Server, string) {
	t.Helper()
	srv := sshtest.Start(t, sshtest.Options{Without: []string{"bwrap"}})
	return srv, filepath.Join(srv.Dir, "bin")
}

// TestRemoteSandboxMissing: on a host without bubblewrap or a
// readonly_user, an unapproved command does not run under required (the
// error says how to fix the host), runs under best_effort (the pool's or
// the host's own), and a scheduled check runs whatever the mode.
func TestRemoteSandboxMissing(t *testing.T) {
	t.Parallel()
	srv, bin := startHostWithoutBwrap(t)
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := hosts.Host{Name: "bare-1", Address: srv.Addr()}
	if res := mustRun(t, p, h, "echo $PATH; command -v bwrap || echo no-bwrap", hosts.Options{}); !strings.Contains(string(res.Output), bin) || !strings.Contains(string(res.Output), "no-bwrap") {
		t.Fatalf("the host's PATH does not hide bwrap: %s", res.Output)
	}
	if err := p.KnownMissingSandbox(h); err != nil {
		t.Errorf("KnownMissingSandbox before any probe = %v; want nil (not known)", err)
	}
	kind, why, err := p.RemoteSandbox(bg, h)
	if err != nil || kind != hosts.RemoteNone || why != "not installed" {
		t.Fatalf("RemoteSandbox = %q, %q, %v; want none, not installed", kind, why, err)
	}
	var missing *hosts.NoSandboxError
	if err := p.KnownMissingSandbox(h); !errors.As(err, &missing) {
		t.Errorf("KnownMissingSandbox after the probe = %v; want a NoSandboxError", err)
	}
	if err := p.MissingSandbox(bg, h); !errors.As(err, &missing) || !strings.Contains(err.Error(), "install bubblewrap") || !strings.Contains(err.Error(), "readonly_user") {
		t.Fatalf("MissingSandbox = %v", err)
	}
	dir := scratchDir(t)
	_, err = p.Run(bg, h, "touch "+dir+"/required", unapproved(), nil)
	if !errors.As(err, &missing) {
		t.Errorf("under required, an unapproved command on a host without a sandbox: %v", err)
	}
	scheduled := unapproved()
	scheduled.Scheduled = true
	mustRun(t, p, h, "touch "+dir+"/scheduled", scheduled)
	own := h
	own.RemoteSandbox = hosts.RemoteSandboxBestEffort
	mustRun(t, p, own, "touch "+dir+"/host-best-effort", unapproved())
	if err := p.MissingSandbox(bg, own); err != nil {
		t.Errorf("MissingSandbox under the host's best_effort = %v", err)
	}
	for name, ran := range map[string]bool{"required": false, "scheduled": true, "host-best-effort": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != ran {
			t.Errorf("%s: ran = %v, want %v", name, err == nil, ran)
		}
	}
}

// TestRemoteSandboxBestEffortPool: the pool's own mode (policy.remote_sandbox)
// applies to the hosts that set none.
func TestRemoteSandboxBestEffortPool(t *testing.T) {
	t.Parallel()
	srv, _ := startHostWithoutBwrap(t)
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.RemoteSandboxMode = hosts.RemoteSandboxBestEffort
	h := hosts.Host{Name: "bare-2", Address: srv.Addr()}
	if res := mustRun(t, p, h, "echo ran", unapproved()); !strings.Contains(string(res.Output), "ran") {
		t.Errorf("best_effort did not run it: %s", res.Output)
	}
	strict := h
	strict.RemoteSandbox = hosts.RemoteSandboxRequired
	var missing *hosts.NoSandboxError
	if _, err := p.Run(bg, strict, "echo ran", unapproved(), nil); !errors.As(err, &missing) {
		t.Errorf("the host's own required lost to the pool's best_effort: %v", err)
	}
}

// TestRemoteSandboxMasksHomeAndBareNames: "~/" entries are masked in the
// login user's home (and /root, /home/*), bare names there and in its
// .ssh; the wrapper is run by sh as a login shell would, with HOME set.
func TestRemoteSandboxMasksHomeAndBareNames(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bwrap"); err != nil && testing.Short() {
		t.Skip("needs bubblewrap (bwrap), not installed (go test -short skips this; make test installs it)")
	}
	home := filepath.Join(scratchDir(t), "it's home")
	for name, body := range map[string]string{".aws/credentials": "SECRET-aws", ".ssh/id_ed25519": "SECRET-key", "notes.txt": "plain"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, name), []byte(body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts := unapproved("~/.aws", "id_ed25519")
	opts.Timeout = time.Minute
	line := hosts.SandboxedCommand(`cat "$HOME/.aws/credentials" "$HOME/.ssh/id_ed25519" "$HOME/notes.txt"; ls -A "$HOME/.aws"`, opts, "tok")
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "SECRET") || !strings.Contains(string(out), "plain") {
		t.Errorf("home secrets read, or the plain file not:\n%s", out)
	}
}

// TestRemoteSandboxMasksUnderALinkedParent: a secret path whose parent is
// a symlink (/var/run/secrets, /var/run being /run) is masked where it
// leads; a mask bwrap tried to make under the link failed every sandboxed
// command on a host that had the directory (the nsverify SSH run).
func TestRemoteSandboxMasksUnderALinkedParent(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := scratchDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "run", "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run", "secrets", "db-password"), []byte("SECRET-db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "run"), filepath.Join(dir, "varrun")); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, p, h, "cat "+dir+"/varrun/secrets/db-password "+dir+"/run/secrets/db-password; echo ran", unapproved(dir+"/varrun/secrets"))
	if !strings.Contains(string(res.Output), "ran") || strings.Contains(string(res.Output), "SECRET-") {
		t.Errorf("the secret under a linked parent was read, or the command did not run:\n%s", res.Output)
	}
}

// TestRemoteSandboxCommentHiddenWriterWritesNothing: the red team's
// comment ending in a backslash hid `rm -rf DIR` from the classifier (now
// fixed in approvals, TestCommentEndsAtNewline); were such a line allowed
// again, the sandbox under it still writes nothing on an SSH host.
func TestRemoteSandboxCommentHiddenWriterWritesNothing(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	dir := scratchDir(t)
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, p, h, "uptime # \\\ntouch "+dir+"/x; rm -rf "+dir+"/keep", unapproved())
	if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the hidden touch wrote %s/x (stat: %v):\n%s", dir, err, res.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Errorf("the hidden rm removed %s/keep: %v\n%s", dir, err, res.Output)
	}
	if !strings.Contains(string(res.Output), "Read-only file system") {
		t.Errorf("the hidden line did not run in the sandbox:\n%s", res.Output)
	}
}
