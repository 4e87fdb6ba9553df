package nsverify

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/opsbot/opsbot/hosts/sshtest"
)

// sshdScript runs sshd over the copy-on-write root; see its header.
//
//go:embed sshd.sh
var sshdScript []byte

// sshdDir is where the seed holds sshd's config and keys, inside the root
// it runs in.
const sshdDir = "opt/opsbot-sshd"

// RemoteHost is an OpenSSH sshd that runs in throwaway namespaces over a
// copy-on-write view of this machine with the seed tree on top, as one run
// of Sandbox does, but for as long as the caller likes: an SSH host whose
// every change to its file system and every connect or send of its
// processes is recorded. Its network namespace has only a loopback; Addr
// is a port on this machine's loopback forwarded to it.
type RemoteHost struct {
	Addr         string // host:port for hosts.Host.Address
	User         string // the login user: root
	KnownHosts   string // trusts exactly this host at Addr
	IdentityFile string // the client key

	out   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ln    net.Listener

	mu     sync.Mutex
	stdout bytes.Buffer
	log    bytes.Buffer
	done   chan struct{} // closed when the script has exited
	err    error         // the script's exit, once done

	stopOnce sync.Once
	stopped  Report
	stopErr  error
}

// StartRemote starts a RemoteHost whose seed tree is built under dir, with
// secrets (absolute path → content) added to it, e.g. seed files at the
// policy's secret paths. Stop it to learn what changed.
func StartRemote(dir string, secrets map[string]string) (*RemoteHost, error) {
	if err := remoteAvailable(); err != nil {
		return nil, err
	}
	h := &RemoteHost{User: "root", out: filepath.Join(dir, "run"), done: make(chan struct{})}
	seed := filepath.Join(dir, "seed")
	if err := h.writeSeed(dir, seed, secrets); err != nil {
		return nil, fmt.Errorf("nsverify: building the seed tree: %w", err)
	}
	script := filepath.Join(dir, "sshd.sh")
	if err := os.WriteFile(script, sshdScript, 0o700); err != nil {
		return nil, fmt.Errorf("nsverify: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(h.out, "mnt"), 0o700); err != nil {
		return nil, fmt.Errorf("nsverify: %w", err)
	}
	if err := h.start(script, seed); err != nil {
		return nil, err
	}
	return h, nil
}

// remoteAvailable is Available plus what the remote host needs: sshd and
// bubblewrap, the sandbox under test.
func remoteAvailable() error {
	if err := Available(); err != nil {
		return err
	}
	if _, err := os.Stat(sshtest.SSHD); err != nil {
		return fmt.Errorf("nsverify: %s not found: install the Debian package openssh-server (make test-deps does)", sshtest.SSHD)
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return errors.New("nsverify: bwrap not found: install the Debian package bubblewrap (make test-deps does)")
	}
	return nil
}

// writeSeed builds the seed tree, adds the secrets, sshd's privilege
// separation directory, config and keys, and writes the client's
// known_hosts once Addr is known (start).
func (h *RemoteHost) writeSeed(dir, seed string, secrets map[string]string) error {
	if err := buildSeed(seed); err != nil {
		return err
	}
	for name, text := range secrets {
		if err := writeFile(filepath.Join(seed, name), []byte(text)); err != nil {
			return err
		}
		if err := os.Chmod(filepath.Join(seed, name), 0o600); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(seed, "run/sshd"), 0o755); err != nil {
		return err
	}
	own := filepath.Join(seed, sshdDir)
	if err := os.MkdirAll(own, 0o700); err != nil {
		return err
	}
	hostKey, err := newSSHKey(filepath.Join(own, "host_ed25519"))
	if err != nil {
		return err
	}
	h.IdentityFile = filepath.Join(dir, "id_ed25519")
	client, err := newSSHKey(h.IdentityFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(own, "authorized_keys"), ssh.MarshalAuthorizedKey(client), 0o600); err != nil {
		return err
	}
	h.KnownHosts = filepath.Join(dir, "known_hosts")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h.ln, h.Addr = ln, ln.Addr().String()
	if err := os.WriteFile(h.KnownHosts, []byte(sshtest.KnownHostsLine(h.Addr, hostKey)+"\n"), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(own, "sshd_config"), []byte(sshdConfig), 0o600)
}

// sshdConfig is sshtest's configuration, inside the namespace: sshd's
// own files are in the seed, and it writes none (no pid file, the log on
// stderr).
var sshdConfig = strings.Join([]string{
	"ListenAddress 127.0.0.1:22",
	"HostKey /" + sshdDir + "/host_ed25519",
	"AuthorizedKeysFile /" + sshdDir + "/authorized_keys",
	"PidFile none",
	"PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
	"UsePAM no", "StrictModes no", "PermitRootLogin yes", "UseDNS no", "PrintMotd no", "PrintLastLog no",
	"AllowAgentForwarding no", "AllowTcpForwarding no", "X11Forwarding no", "LogLevel VERBOSE",
	"MaxSessions 10", "SetEnv SHLVL=1",
}, "\n") + "\n"

// newSSHKey writes a new ed25519 private key to path and returns its
// public key.
func newSSHKey(path string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(pub)
}

// start starts the script, waits for sshd to listen (its log says so) and
// starts forwarding Addr into the namespace.
func (h *RemoteHost) start(script, seed string) error {
	cmd := exec.Command("bash", script, seed, h.out, "/"+sshdDir+"/sshd_config")
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL, // and the script's setpriv ends sshd's namespace with it
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("nsverify: %w", err)
	}
	listening := make(chan struct{})
	cmd.Stdout = &lockedWriter{mu: &h.mu, w: &h.stdout}
	cmd.Stderr = &logWriter{h: h, listening: listening}
	if err := cmd.Start(); err != nil {
		h.ln.Close()
		return fmt.Errorf("nsverify: starting sshd: %w", err)
	}
	h.cmd, h.stdin = cmd, stdin
	go func() { h.err = cmd.Wait(); close(h.done) }()
	select {
	case <-listening:
	case <-h.done:
		h.ln.Close()
		return fmt.Errorf("nsverify: sshd exited before listening: %v\n%s", h.err, h.Log())
	}
	go h.forward(cmd.Process.Pid)
	return nil
}

// logWriter keeps sshd's log (the script's stderr) and closes listening
// once it says "Server listening on".
type logWriter struct {
	h         *RemoteHost
	listening chan struct{}
	seen      bool
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	w.h.log.Write(b)
	if !w.seen && strings.Contains(w.h.log.String(), "Server listening on") {
		w.seen = true
		close(w.listening)
	}
	return len(b), nil
}

// Log is sshd's log so far.
func (h *RemoteHost) Log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.log.String()
}

// forward accepts on Addr and joins each connection to one made inside
// the namespace of pid to sshd.
func (h *RemoteHost) forward(pid int) {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			in, err := dialInNetns(pid, "127.0.0.1:22")
			if err != nil {
				return
			}
			defer in.Close()
			go func() { _, _ = io.Copy(in, c); in.(*net.TCPConn).CloseWrite() }()
			_, _ = io.Copy(c, in)
		}()
	}
}

// dialInNetns connects to addr from inside the network namespace of pid:
// the socket is made by a thread that entered that namespace, and stays
// there. The thread is never unlocked, so it ends with its goroutine
// rather than serve other goroutines from the wrong namespace.
func dialInNetns(pid int, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, err}
			return
		}
		c, err := net.Dial("tcp", addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// Stop ends sshd and every process of its sessions (close the clients'
// connections first: a session still running is cut short) and reports
// what they changed and every connect or send they attempted. The
// report's Exit is the script's status, not a command's.
func (h *RemoteHost) Stop() (Report, error) {
	h.stopOnce.Do(func() { h.stopped, h.stopErr = h.stop() })
	return h.stopped, h.stopErr
}

func (h *RemoteHost) stop() (Report, error) {
	h.ln.Close()
	h.stdin.Close()
	<-h.done
	if h.err != nil {
		return Report{}, fmt.Errorf("nsverify: the sshd harness failed: %w\n%s", h.err, tail([]byte(h.Log())))
	}
	h.mu.Lock()
	out := bytes.Clone(h.stdout.Bytes())
	h.mu.Unlock()
	rep, err := parseRecords("sshd", out)
	if err != nil {
		return Report{}, err
	}
	trace, err := os.ReadFile(filepath.Join(h.out, "trace"))
	if err != nil {
		return Report{}, fmt.Errorf("nsverify: %w", err)
	}
	rep.addTrace(trace)
	return rep, nil
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
