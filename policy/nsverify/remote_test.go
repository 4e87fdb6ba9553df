package nsverify

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// seededSecrets are files at the default policy's secret paths, one of
// each kind of entry: absolute paths and directories, wildcards, "~/"
// paths in root's and others' homes, bare names in homes and elsewhere.
// Each holds the run's marker, which no sandboxed output may contain.
var seededSecrets = []string{
	"/etc/shadow", "/etc/gshadow", "/etc/ssl/private/server.key", "/etc/ssh/ssh_host_ed25519_key",
	"/etc/kubernetes/admin.conf", "/etc/kubernetes/pki/ca.key", "/etc/mysql/debian.cnf",
	// /run/secrets is also the policy's /var/run/secrets, under the link
	// /var/run: the mask must be made where the link leads.
	"/run/secrets/db-password",
	"/etc/opsbot/opsbot.env", "/var/lib/opsbot/opsbot.db",
	"/root/.ssh/id_ed25519", "/root/.aws/credentials", "/root/.bash_history", "/root/.git-credentials",
	"/root/.kube/config", "/root/.docker/config.json", "/root/.netrc", "/root/.pgpass",
	"/home/deploy/.kube/config", "/home/deploy/.bash_history", "/home/ops/.ssh/id_rsa", "/home/ops/.zsh_history",
}

// remoteOptions are the options the bot gives a command the policy
// allows on an SSH host (bot/adapters.go): the sandbox, with the
// destinations the policy allowed, the secret paths to mask and the
// unattended environment.
func remoteOptions(p *policy.Policy, d policy.Decision) hosts.Options {
	return hosts.Options{
		Sandbox: &hosts.Sandbox{ConnectPorts: d.ConnectPorts()},
		Hidden:  p.SecretPaths(),
		Env:     policy.UnattendedEnv(),
		Timeout: DefaultDeadline,
		// All of it, for the secret check (a cut output fails it).
		OutputLimit: 64 << 20,
	}
}

// controls run unsandboxed (as an approved command would) in the same
// sshd as the corpus: each must show up in its own check, so no check
// passes because it cannot see.
const (
	controlWrite  = "touch /srv/opsbot-control-write"
	controlRead   = "cat /etc/shadow /root/.aws/credentials"
	controlEgress = "echo > /dev/tcp/198.51.100.7/9"
	// A command given the network runs in sshd's network namespace, as
	// on a host it would run in the host's: its loopback connects must
	// go to the ports the policy allowed.
	controlLoopback = "echo > /dev/tcp/127.0.0.1/6379"
)

// TestAllowedCorpusOverSSH runs every corpus line the policy allows on an
// SSH host over SSH, in the remote sandbox (bubblewrap through the
// session), on a loopback sshd that itself runs in the harness's
// throwaway namespaces over the copy-on-write root.
//
// Why the sshd runs inside the harness rather than strace -f around a
// plain sshtest server: the overlay's upper layer records every change to
// the file system whatever the call that made it (open for writing,
// rename, chmod, utimes, setxattr, a write through an inherited
// descriptor, a mount leaking out of bubblewrap), where a trace is only
// as complete as its list of calls and its reading of their paths across
// the sandbox's own mount namespaces. The strace around sshd still gives
// the connects and sends of every session process, as for the local
// harness. Secrets are seed files with a marker at the policy's secret
// paths, over the machine's own.
//
// Every line: 0 changed paths, no marker in its output, no connect or
// send outside loopback. The controls prove each check can fail.
func TestAllowedCorpusOverSSH(t *testing.T) {
	t.Parallel()
	start := time.Now()
	// The default policy, with this loopback fleet's own destinations
	// allowed: the lines that reach them run with the network (sshd's
	// namespace, where nothing but sshd listens), as they would on a host.
	if err := remoteAvailable(); err != nil && testing.Short() {
		t.Skipf("%v (go test -short skips this; make test runs it)", err)
	}
	p, err := policy.NewPolicy(policy.PolicyConfig{EgressAllow: []string{"localhost", "127.0.0.1", "[::1]"}})
	if err != nil {
		t.Fatal(err)
	}
	marker := "opsbot-seeded-secret-" + randomHex(t)
	secrets := map[string]string{}
	for _, s := range seededSecrets {
		secrets[s] = marker + " " + s + "\n"
	}
	secrets["/etc/shadow"] = shadowWith(t, marker)
	host, err := StartRemote(t.TempDir(), secrets)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = host.Stop() })
	pool, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: host.KnownHosts, IdentityFiles: []string{host.IdentityFile}, User: host.User}})
	if err != nil {
		t.Fatal(err)
	}
	h := hosts.Host{Name: target.Host, Address: host.Addr}
	if kind, why, err := pool.RemoteSandbox(t.Context(), h); err != nil || kind != hosts.RemoteBwrap {
		pool.Close()
		t.Fatalf("the loopback host's sandbox: %q (%s), %v; want bwrap\nsshd log:\n%s", kind, why, err, host.Log())
	}
	lines, opts := allowedRemote(t, p)
	results := runRemote(t, pool, h, lines, opts)
	controls := runControls(t, pool, h)
	pool.Close()
	rep, err := host.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(controls[controlRead], marker) {
		t.Errorf("the unsandboxed control %q did not print the seeded secret: the secret check sees nothing\n%s", controlRead, controls[controlRead])
	}
	leaks, unrun := 0, 0
	for i, out := range results {
		if strings.HasPrefix(out, "bwrap: ") { // the sandbox itself failed: the line never ran
			unrun++
			t.Errorf("%s: %q did not run: the sandbox failed: %s", lines[i].Where, lines[i].Command, strings.TrimSpace(out))
		}
		if n := strings.Count(out, marker); n > 0 {
			leaks += n
			t.Errorf("%s: %q printed a seeded secret in the sandbox:\n%s", lines[i].Where, lines[i].Command, out)
		}
	}
	changed := checkChanges(t, rep)
	egress := checkEgress(t, rep)
	ports, networked := allowedPorts(opts)
	reached, loopback := checkLoopback(t, rep, ports)
	if networked > 0 && reached == 0 {
		t.Errorf("%d lines were allowed a destination, yet no connect to one was seen: the check of where they go sees nothing", networked)
	}
	t.Logf("%d allowed corpus lines run over SSH in the remote sandbox (%d of them not run: the sandbox failed; %d with a network destination, ports %v): %d changed paths, %d secret markers in output, %d egress attempts, %d loopback connects to allowed ports, %d to others, %d files opened for writing unchanged; %v",
		len(lines), unrun, networked, ports, changed, leaks, egress, reached, loopback, len(rep.Copied), time.Since(start).Round(time.Second))
}

// allowedRemote are the corpus lines the policy allows on an SSH host,
// with the options the bot would run each with.
func allowedRemote(t *testing.T, p *policy.Policy) ([]Line, []hosts.Options) {
	var lines []Line
	var opts []hosts.Options
	for _, l := range remoteCorpus(t) {
		d := p.Check(target, l.Command)
		if d.Action != policy.Allow || strings.ContainsRune(l.Command, 0) {
			continue // TestAllowedCorpusChangesNothing fails on a NUL
		}
		lines = append(lines, l)
		opts = append(opts, remoteOptions(p, d))
	}
	if len(lines) < 200 {
		t.Fatalf("only %d corpus commands are allowed; the harmless corpus alone should give 300", len(lines))
	}
	return lines, opts
}

// verdictFiles are corpora of policy/testdata whose lines start with
// the verdict they must get (none allow): any line the policy allows all
// the same runs too.
var verdictFiles = []string{"../testdata/bypass_tools.txt", "../testdata/exfil.txt"}

// remoteCorpus is every corpus line: those the local harness runs, the
// everyday tool commands, and the verdict corpora without their verdicts.
func remoteCorpus(t *testing.T) []Line {
	lines := readCorpora(t, append(slices.Clone(corpusFiles), "../testdata/harmless_tools.txt")...)
	for _, name := range verdictFiles {
		for _, l := range readCorpora(t, name) {
			_, command, _ := strings.Cut(l.Command, " ")
			if q, ok := strings.CutPrefix(command, "q:"); ok {
				var err error
				if command, err = strconv.Unquote(q); err != nil {
					t.Fatalf("%s: %v", l.Where, err)
				}
			}
			l.Command = command
			lines = append(lines, l)
		}
	}
	return lines
}

// runRemote runs the lines over the pool's one connection, as many at
// once as it has sessions, and returns each one's output.
func runRemote(t *testing.T, pool *hosts.Pool, h hosts.Host, lines []Line, opts []hosts.Options) []string {
	out := make([]string, len(lines))
	errs := make([]error, len(lines))
	next := make(chan int)
	var wg sync.WaitGroup
	for range hosts.DefaultMaxSessions {
		wg.Go(func() {
			for i := range next {
				res, err := pool.Run(t.Context(), h, lines[i].Command, opts[i], nil)
				out[i], errs[i] = string(res.Output), err
				if err == nil && res.Truncated {
					errs[i] = errors.New("its output was cut, so the secret check could not read all of it")
				}
			}
		})
	}
	for i := range lines {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %q did not run: %v", lines[i].Where, lines[i].Command, err)
		}
	}
	return out
}

// runControls runs the controls unsandboxed and returns their outputs.
func runControls(t *testing.T, pool *hosts.Pool, h hosts.Host) map[string]string {
	out := map[string]string{}
	for _, c := range []string{controlWrite, controlRead, controlEgress, controlLoopback} {
		res, err := pool.Run(t.Context(), h, c, hosts.Options{Timeout: DefaultDeadline}, nil)
		if err != nil {
			t.Fatalf("control %q: %v", c, err)
		}
		out[c] = string(res.Output)
	}
	return out
}

// checkChanges fails on every changed path but the write control's, and
// when that one is missing; it returns how many others there were.
func checkChanges(t *testing.T, rep Report) int {
	control, n := false, 0
	for _, c := range rep.Changes {
		switch c.Path {
		case "srv/opsbot-control-write":
			control = true
		case "srv": // the control's new name in /srv
			if _, after, _ := dirState(c.After); len(after) > 0 && onlyAdds(c, map[string]bool{"srv/opsbot-control-write": true}) {
				continue
			}
			fallthrough
		default:
			n++
			t.Errorf("a session changed %s", c)
		}
	}
	if !control {
		t.Errorf("the unsandboxed control %q changed nothing the harness saw: the check of changed paths sees nothing\n%s", controlWrite, rep)
	}
	return n
}

// checkEgress fails on every attempt outside loopback but the egress
// control's, and when that one is missing; it returns how many others.
func checkEgress(t *testing.T, rep Report) int {
	control, n := false, 0
	for _, a := range rep.Egress {
		if a.Addr == "198.51.100.7" && a.Port == "9" {
			control = true
			continue
		}
		n++
		t.Errorf("egress from a session: %s", a)
	}
	if !control {
		t.Errorf("the unsandboxed control %q was not seen: the egress check sees nothing", controlEgress)
	}
	return n
}

// allowedPorts are the ports of every network destination the policy
// allowed a line, and how many lines have one.
func allowedPorts(opts []hosts.Options) (ports []uint16, lines int) {
	for _, o := range opts {
		if len(o.Sandbox.ConnectPorts) > 0 {
			lines++
			ports = append(ports, o.Sandbox.ConnectPorts...)
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports), lines
}

// checkLoopback fails on every loopback connect or send to a port no line
// was allowed, but the loopback control's (which must be there) and sshd's
// own at its start (resolving ListenAddress: a connect of a datagram
// socket to the unspecified address at port 22, which sends nothing);
// it returns how many went to allowed ports, and how many elsewhere. A sandbox without network has a loopback of
// its own, where nothing listens; a line allowed the network shares
// sshd's.
func checkLoopback(t *testing.T, rep Report, allowed []uint16) (reached, others int) {
	control := false
	for _, a := range rep.Loopback {
		port, _ := strconv.Atoi(a.Port)
		switch {
		case a.Addr == "127.0.0.1" && a.Port == "6379":
			control = true
		case (a.Addr == "::" || a.Addr == "0.0.0.0") && a.Port == "22":
		case a.Port == "53":
			// Name resolution: glibc asks 127.0.0.1 and ::1 when it has no
			// reachable resolver (in a sandbox without network, its own
			// loopback); which netns a connect was made in is not in the
			// trace, so loopback DNS is not counted against any line.
		case slices.Contains(allowed, uint16(port)):
			reached++
		default:
			// Not a failure: a sandbox without network has a loopback of
			// its own, and the trace does not say which namespace a
			// connect was made in (nor TCP from UDP: getaddrinfo connects
			// datagram sockets to sort addresses), so these cannot be
			// told from a networked line's. Counted, and logged.
			others++
			t.Logf("a loopback connect to a port no line was allowed (in some network namespace): %s", a.Line)
		}
	}
	if !control {
		t.Errorf("the unsandboxed control %q was not seen: the loopback check sees nothing", controlLoopback)
	}
	return reached, others
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// shadowWith is an /etc/shadow for this machine's accounts whose password
// hashes are the marker: sshd, outside the sandbox, reads it (an account
// without an entry counts as locked), and no sandboxed command may.
func shadowWith(t *testing.T, marker string) string {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for l := range strings.Lines(string(passwd)) {
		if name, _, ok := strings.Cut(l, ":"); ok {
			b.WriteString(name + ":$6$" + marker + ":19000:0:99999:7:::\n")
		}
	}
	return b.String()
}
