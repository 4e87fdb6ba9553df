// Package sshtest starts a real OpenSSH sshd for tests and benchmarks: on
// loopback, at a free port, with a throwaway host key and a throwaway
// client key in its authorized_keys, and a known_hosts file that trusts
// exactly it. It is stopped by pid, together with every process it
// started. Any package's tests can use it:
//
//	srv := sshtest.Start(t, sshtest.Options{})
//	cfg := hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts,
//		IdentityFiles: []string{srv.IdentityFile}, User: srv.User}, ...}
//
// It needs Debian's openssh-server (/usr/sbin/sshd) and fails when it is
// missing; only under go test -short (a laptop without it) does Start
// skip the test instead, saying so. The login user is the one running the
// test (root in CI), with its own login shell.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"golang.org/x/sys/unix"
)

// SSHD is the sshd binary; it must be an absolute path (sshd re-executes
// itself).
const SSHD = "/usr/sbin/sshd"

// TB is the part of testing.TB the harness uses (so this package does not
// import testing).
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Options shape the server. The zero value is one address, MaxSessions 10.
type Options struct {
	// Addrs are the loopback IPs to listen on, all at the same port
	// (default 127.0.0.1). A fleet of N hosts is one sshd on N addresses.
	Addrs []string
	// MaxSessions is sshd's per-connection session limit (default 10).
	MaxSessions int
	// MaxStartups is sshd's unauthenticated-connection limit (default
	// "1000:30:1000", far above OpenSSH's 10:30:100, for fan-out tests).
	MaxStartups string
	// Extra are more sshd_config lines.
	Extra []string
	// Without are programs of /usr/bin and /usr/sbin the sessions do not
	// find (a host where "bwrap" is not installed, as far as its commands
	// can tell): a forced command sets PATH to a folder of links to all
	// the others before it runs what the client asked, as a host's
	// profile would (sshd sets PATH after SetEnv). Taken with Extra's own
	// ForceCommand, it is an error.
	Without []string
	// Replace are programs the sessions find as another one: the name in
	// their PATH is a link to the path given (a host whose find is
	// BusyBox's: {"find": "/usr/bin/busybox"}). Like Without, it sets
	// PATH by a forced command.
	Replace map[string]string
}

// Server is a running (or stopped) sshd.
type Server struct {
	Dir          string        // its temporary directory
	User         string        // the login user: the current user
	Port         int           // shared by every address
	Addrs        []string      // host:port of each address
	KnownHosts   string        // known_hosts file trusting this server's key at every address
	IdentityFile string        // client private key (OpenSSH format, no passphrase)
	HostKey      ssh.PublicKey // the server's host key
	Client       ssh.Signer    // the client key

	opts    Options
	config  string
	logFile string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts a server for the test; it is stopped at cleanup. Any
// problem fails the test; under go test -short, a missing sshd skips it.
func Start(tb TB, opts Options) *Server {
	tb.Helper()
	SkipShort(tb)
	s, err := New(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("sshtest: %v", err)
	}
	tb.Cleanup(func() { _ = s.Stop() })
	return s
}

// Missing says what this machine lacks to start sshd ("" when nothing).
func Missing() string {
	if fi, err := os.Stat(SSHD); err != nil || fi.Mode()&0o111 == 0 {
		return SSHD + " (Debian's openssh-server) is not installed"
	}
	return ""
}

// SkipShort skips the test under go test -short when sshd is missing, and
// says so: make test installs it and runs every test.
func SkipShort(tb TB) {
	tb.Helper()
	if f := flag.Lookup("test.short"); f != nil && f.Value.String() == "true" {
		if why := Missing(); why != "" {
			tb.Skipf("needs a real sshd: %s (go test -short skips this; make test installs it)", why)
		}
	}
}

// SkipShortUnlessRoot skips the test under go test -short when it does
// not run as root; what says what needs root (an sshd that logs in as
// another account).
func SkipShortUnlessRoot(tb TB, what string) {
	tb.Helper()
	if f := flag.Lookup("test.short"); f != nil && f.Value.String() == "true" && os.Geteuid() != 0 {
		tb.Skipf("needs root for %s (go test -short skips this; make test runs it as root)", what)
	}
}

// MaxAddrs is how many addresses one sshd listens on at most (OpenSSH's
// MAX_LISTEN_SOCKS); NewFleet goes beyond with several.
const MaxAddrs = 16

// New writes keys and config into dir and starts sshd. Stop it when done.
func New(dir string, opts Options) (*Server, error) {
	return newServer(dir, opts, nil)
}

// newServer is New, reusing the keys of shared when it is not nil.
func newServer(dir string, opts Options, shared *Server) (*Server, error) {
	if len(opts.Addrs) == 0 {
		opts.Addrs = []string{"127.0.0.1"}
	}
	if len(opts.Addrs) > MaxAddrs {
		return nil, fmt.Errorf("one sshd listens on at most %d addresses, not %d: use NewFleet", MaxAddrs, len(opts.Addrs))
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 10
	}
	if opts.MaxStartups == "" {
		opts.MaxStartups = "1000:30:1000"
	}
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	port, err := freePort(opts.Addrs[0])
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, User: u.Username, Port: port, opts: opts,
		config: filepath.Join(dir, "sshd_config"), logFile: filepath.Join(dir, "sshd.log")}
	for _, a := range opts.Addrs {
		s.Addrs = append(s.Addrs, net.JoinHostPort(a, strconv.Itoa(port)))
	}
	if err := s.writeKeys(shared); err != nil {
		return nil, err
	}
	if err := s.hidePrograms(); err != nil {
		return nil, err
	}
	if err := s.writeConfig(); err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr is the first address, host:port.
func (s *Server) Addr() string { return s.Addrs[0] }

// writeKeys makes the host and client keys (or copies those of shared),
// authorized_keys and known_hosts.
func (s *Server) writeKeys(shared *Server) error {
	hostFile, clientFile := filepath.Join(s.Dir, "host_ed25519"), filepath.Join(s.Dir, "id_ed25519")
	if shared == nil {
		hostPub, _, err := newKey(hostFile)
		if err != nil {
			return err
		}
		_, clientSigner, err := newKey(clientFile)
		if err != nil {
			return err
		}
		s.HostKey, s.Client = hostPub, clientSigner
	} else {
		for _, f := range [][2]string{{shared.Dir + "/host_ed25519", hostFile}, {shared.IdentityFile, clientFile}} {
			if err := copyFile(f[0], f[1]); err != nil {
				return err
			}
		}
		s.HostKey, s.Client = shared.HostKey, shared.Client
	}
	s.IdentityFile = clientFile
	if err := os.WriteFile(filepath.Join(s.Dir, "authorized_keys"), ssh.MarshalAuthorizedKey(s.Client.PublicKey()), 0o600); err != nil {
		return err
	}
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	var lines []string
	for _, a := range s.Addrs {
		lines = append(lines, KnownHostsLine(a, s.HostKey))
	}
	return os.WriteFile(s.KnownHosts, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// KnownHostsLine is the known_hosts line trusting key at addr (host:port).
func KnownHostsLine(addr string, key ssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(addr)}, key)
}

// NewHostKey returns a fresh public key, e.g. to write a known_hosts file
// that expects another key than the server's.
func NewHostKey() ssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		panic(err)
	}
	return k
}

// newKey writes a new ed25519 private key to path (mode 0600, as sshd
// demands) and returns it.
func newKey(path string) (ssh.PublicKey, ssh.Signer, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	return sshPub, signer, err
}

// writeConfig writes sshd_config, dropping options this sshd does not
// know (PerSourcePenalties exists from OpenSSH 9.8 on).
func (s *Server) writeConfig() error {
	lines := s.configLines(true)
	if err := os.WriteFile(s.config, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	if err := ensurePrivsepDir(); err != nil {
		return err
	}
	out, err := exec.Command(SSHD, "-t", "-f", s.config).CombinedOutput()
	if err == nil {
		return nil
	}
	if !strings.Contains(string(out), "PerSourcePenalties") {
		return fmt.Errorf("sshd -t: %v: %s", err, out)
	}
	lines = s.configLines(false)
	return os.WriteFile(s.config, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func (s *Server) configLines(penalties bool) []string {
	var lines []string
	for _, a := range s.Addrs {
		lines = append(lines, "ListenAddress "+a)
	}
	lines = append(lines,
		"HostKey "+filepath.Join(s.Dir, "host_ed25519"),
		"PidFile "+filepath.Join(s.Dir, "sshd.pid"),
		"AuthorizedKeysFile "+filepath.Join(s.Dir, "authorized_keys"),
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin yes",
		"UseDNS no",
		"PrintMotd no",
		"PrintLastLog no",
		"AllowAgentForwarding no",
		"AllowTcpForwarding no",
		"X11Forwarding no",
		"LogLevel VERBOSE",
		"MaxSessions "+strconv.Itoa(s.opts.MaxSessions),
		"MaxStartups "+s.opts.MaxStartups,
	)
	// Debian's bash sources ~/.bashrc for commands run over SSH when it
	// is a top-level shell; a developer's bashrc (pyenv init, say) would
	// then cost every command 100+ ms and make tests and benchmarks
	// measure it. SHLVL=1 makes the login shell a second-level one.
	lines = append(lines, "SetEnv SHLVL=1")
	if penalties {
		// OpenSSH 9.8+ would otherwise penalise 127.0.0.1 for the
		// connections tests refuse on purpose (bad host keys).
		lines = append(lines, "PerSourcePenalties no")
	}
	return append(lines, s.opts.Extra...)
}

// ensurePrivsepDir creates /run/sshd, which sshd run as root insists on.
func ensurePrivsepDir() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if _, err := os.Stat(SSHD); err != nil {
		return fmt.Errorf("%s not found: install Debian's openssh-server (apt-get install -y openssh-server): %w", SSHD, err)
	}
	return os.MkdirAll("/run/sshd", 0o755)
}

// Start starts sshd (again, after Stop) and waits until every address
// accepts connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("sshd is already running")
	}
	if err := ensurePrivsepDir(); err != nil {
		return err
	}
	w, err := s.watchLog()
	if err != nil {
		return err
	}
	defer w.close()
	cmd := exec.Command(SSHD, "-D", "-f", s.config, "-E", s.logFile)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", SSHD, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reaps sshd; Stop waits for it
	s.cmd, s.exited = cmd, exited
	if err := w.waitListening(cmd.Process.Pid, len(s.Addrs)); err != nil {
		s.stopLocked()
		return fmt.Errorf("%w\nsshd log:\n%s", err, s.Log())
	}
	return nil
}

// readyBound bounds the wait for sshd to listen. The wait is woken by
// events (the log growing, sshd exiting), not by polling: the bound only
// turns an sshd that never listens into a clear error.
const readyBound = 2 * time.Minute

// logWatch waits for lines in sshd's log past what it held at the start.
type logWatch struct {
	file   string
	offset int64
	fd     int // inotify, on the log's directory
}

// watchLog starts watching the log's directory, before sshd starts, so
// that no write can be missed.
func (s *Server) watchLog() (*logWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, s.Dir, unix.IN_CREATE|unix.IN_MODIFY); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inotify on %s: %w", s.Dir, err)
	}
	w := &logWatch{file: s.logFile, fd: fd}
	if fi, err := os.Stat(s.logFile); err == nil {
		w.offset = fi.Size() // a restart: the earlier run's lines do not count
	}
	return w, nil
}

func (w *logWatch) close() { unix.Close(w.fd) }

// waitListening waits until sshd (pid) has logged "Server listening on"
// once per address, which it does after listen(2): connections are then
// accepted. It fails when sshd exits first.
func (w *logWatch) waitListening(pid, addrs int) error {
	exit, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open sshd: %w", err)
	}
	defer unix.Close(exit)
	deadline := time.Now().Add(readyBound)
	buf := make([]byte, 4096)
	for {
		if w.count("Server listening on ") >= addrs {
			return nil
		}
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(exit), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(max(time.Until(deadline).Milliseconds(), 0)))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("poll: %w", err)
		case n == 0:
			return fmt.Errorf("sshd not listening on every address after %v", readyBound)
		case fds[1].Revents != 0:
			if w.count("Server listening on ") >= addrs {
				return nil
			}
			return errors.New("sshd exited before listening on every address")
		}
		for { // drain the events: only "the directory changed" matters
			if _, err := unix.Read(w.fd, buf); err != nil {
				break
			}
		}
	}
}

// count counts substr in the log past the offset.
func (w *logWatch) count(substr string) int {
	f, err := os.Open(w.file)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, w.offset, 1<<40))
	return strings.Count(string(b), substr)
}

// Stop kills sshd and every process it started (connections and the
// commands running in them), by pid. Safe to call when stopped.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Server) stopLocked() error {
	if s.cmd == nil {
		return nil
	}
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP) // no new connections while we look
	tree := descendants(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, p := range tree {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	<-s.exited
	s.cmd = nil
	return nil
}

// Restart stops and starts the server on the same addresses and keys:
// every existing connection is gone.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Start()
}

// Log returns sshd's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logFile)
	return string(b)
}

// freePort finds a TCP port free on ip.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Processes returns the pids of every process the server started: its
// connections and the commands running in them (not the listener).
func (s *Server) Processes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	return descendants(s.cmd.Process.Pid)
}
