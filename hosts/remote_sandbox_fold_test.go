package hosts_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// sessionLog makes every session of an sshd write a line to a log before
// it runs what the client asked: the server address it came to, and
// "bwrap" when the command runs bubblewrap. PATH, when set, is the
// sessions' PATH (as startHostWithoutBwrap's).
func sessionLog(t *testing.T, path string) (extra []string, read func() []string) {
	t.Helper()
	dir := t.TempDir()
	log, script := filepath.Join(dir, "sessions.log"), filepath.Join(dir, "session.sh")
	setPath := ""
	if path != "" {
		setPath = "PATH=" + path + "; export PATH\n"
	}
	body := "#!/bin/sh\n" + setPath + `set -- $SSH_CONNECTION
case $SSH_ORIGINAL_COMMAND in *bwrap*) b=bwrap;; *) b=plain;; esac
echo "$3 $b" >> ` + log + `
exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"ForceCommand " + script}, func() []string {
		b, err := os.ReadFile(log)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
}

// TestRemoteSandboxColdFanoutOneSessionPerHost: on a cold fan-out of an
// unapproved command, each host sees one SSH session and one bubblewrap
// run (the probe rides on the command), the command runs in the sandbox,
// and the pool then knows each host has bubblewrap without asking again.
func TestRemoteSandboxColdFanoutOneSessionPerHost(t *testing.T) {
	t.Parallel()
	const n = 8
	extra, sessions := sessionLog(t, "")
	var addrs []string
	for i := range n {
		addrs = append(addrs, fmt.Sprintf("127.0.0.%d", i+1))
	}
	srv := sshtest.Start(t, sshtest.Options{Addrs: addrs, Extra: extra})
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var list []hosts.Host
	for i, a := range srv.Addrs {
		list = append(list, hosts.Host{Name: fmt.Sprintf("h%d", i), Address: a})
	}
	dir := scratchDir(t)
	for _, r := range hosts.RunMany(bg, p, list, "touch "+dir+"/x 2>/dev/null || echo confined", unapproved(), hosts.FanOut{}) {
		if r.Err != nil || strings.TrimSpace(string(r.Result.Output)) != "confined" {
			t.Errorf("%s: %q, %v; want confined", r.Host.Name, r.Result.Output, r.Err)
		}
	}
	for _, h := range list {
		if kind, _, err := p.RemoteSandbox(bg, h); err != nil || kind != hosts.RemoteBwrap {
			t.Errorf("%s: RemoteSandbox = %q, %v; want bwrap", h.Name, kind, err)
		}
	}
	counted, want := map[string]int{}, map[string]int{}
	for _, l := range sessions() {
		counted[l]++
	}
	for _, a := range addrs {
		want[a+" bwrap"] = 1
	}
	if fmt.Sprint(counted) != fmt.Sprint(want) {
		t.Errorf("sessions per host (address, kind): %v; want one bwrap session each: %v", counted, want)
	}
}

// TestRemoteSandboxColdMissing: the first unapproved command on a host
// without bubblewrap (its sandbox not probed yet) does not run under
// required, its error says how to fix the host, bubblewrap's complaint is
// not passed on as the command's output, and the host is then known to
// have none.
func TestRemoteSandboxColdMissing(t *testing.T) {
	t.Parallel()
	srv, _ := startHostWithoutBwrap(t)
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := hosts.Host{Name: "bare-cold", Address: srv.Addr()}
	dir := scratchDir(t)
	var mu sync.Mutex
	var streamed strings.Builder
	onChunk := func(c hosts.Chunk) { mu.Lock(); streamed.Write(c.Data); mu.Unlock() }
	res, err := p.Run(bg, h, "touch "+dir+"/ran", unapproved(), onChunk)
	var missing *hosts.NoSandboxError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "install bubblewrap") || missing.Why != "not installed" {
		t.Fatalf("cold, under required: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran on a host without a sandbox")
	}
	if len(res.Output) != 0 || streamed.Len() != 0 {
		t.Errorf("output of a command that never ran: %q, streamed %q", res.Output, streamed.String())
	}
	if kind, _, err := p.RemoteSandbox(bg, h); err != nil || kind != hosts.RemoteNone {
		t.Errorf("RemoteSandbox = %q, %v; want none", kind, err)
	}
}

// TestRemoteSandboxColdWrapperFailure: when a marked first command fails
// before it starts for a reason of its own (its directory is missing),
// the host is still found to have bubblewrap, and the failure is the
// command's result, with the shell's words.
func TestRemoteSandboxColdWrapperFailure(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	opts := unapproved()
	opts.Dir = "/nonexistent-opsbot-dir"
	res, err := p.Run(bg, h, "echo ran", opts, nil)
	if err != nil || res.ExitCode == 0 || strings.Contains(string(res.Output), "ran") || !strings.Contains(string(res.Output), "nonexistent-opsbot-dir") {
		t.Fatalf("Run in a missing directory = %d %q, %v; want its failure, in words", res.ExitCode, res.Output, err)
	}
	if kind, _, err := p.RemoteSandbox(bg, h); err != nil || kind != hosts.RemoteBwrap {
		t.Errorf("RemoteSandbox = %q, %v; want bwrap", kind, err)
	}
	if res := mustRun(t, p, h, "echo ran", unapproved()); strings.TrimSpace(string(res.Output)) != "ran" {
		t.Errorf("then: %q", res.Output)
	}
}
