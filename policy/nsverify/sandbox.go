package nsverify

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// script is the run itself: namespaces' mounts, the traced command and the
// comparison; see its header.
//
//go:embed ns.sh
var script []byte

// DefaultDeadline is how long one command may run before it is stopped
// (SIGTERM, then SIGKILL 5 s later). Commands that follow a log or refresh
// a screen (tail -f, watch) run until it; the run still counts.
const DefaultDeadline = 10 * time.Second

// Sandbox runs commands over one seed tree. Its methods are safe for
// concurrent use; each Run has its own namespaces and scratch layer.
type Sandbox struct {
	dir    string // seed/, ns.sh and one directory per run
	seed   string
	script string
	// Deadline is how long each command may run (DefaultDeadline).
	Deadline time.Duration
}

// New builds the seed tree and the script under dir, which should be
// empty and is left for the caller to remove.
func New(dir string) (*Sandbox, error) {
	s := &Sandbox{dir: dir, seed: filepath.Join(dir, "seed"), script: filepath.Join(dir, "ns.sh"), Deadline: DefaultDeadline}
	if err := os.WriteFile(s.script, script, 0o700); err != nil {
		return nil, fmt.Errorf("nsverify: %w", err)
	}
	if err := buildSeed(s.seed); err != nil {
		return nil, fmt.Errorf("nsverify: building the seed tree: %w", err)
	}
	return s, nil
}

// tools are the programs ns.sh needs on the host, with the Debian package
// that holds each.
var tools = [][2]string{
	{"strace", "strace"}, {"ip", "iproute2"}, {"unshare", "util-linux"}, {"setpriv", "util-linux"},
	{"chroot", "coreutils"}, {"timeout", "coreutils"}, {"sha256sum", "coreutils"}, {"git", "git"},
}

// Available says why commands cannot run here, or nil: the harness needs
// root (to mount overlays and create namespaces without a user namespace,
// so the command runs with root's real file permissions) and a few tools.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("nsverify: the namespace harness needs root (CI runs as root; run the tests with sudo)")
	}
	var missing []string
	for _, t := range tools {
		if _, err := exec.LookPath(t[0]); err != nil {
			missing = append(missing, t[1])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("nsverify: missing tools; install the Debian packages %s (make test-deps does)", strings.Join(missing, " "))
	}
	return nil
}

// Run runs command once in fresh namespaces over a fresh scratch layer and
// reports what it did. An error means the harness itself failed, not the
// command.
func (s *Sandbox) Run(ctx context.Context, command string) (Report, error) {
	out, err := os.MkdirTemp(s.dir, "run-")
	if err != nil {
		return Report{}, fmt.Errorf("nsverify: %w", err)
	}
	defer os.RemoveAll(out)
	if err := os.Mkdir(filepath.Join(out, "mnt"), 0o700); err != nil {
		return Report{}, fmt.Errorf("nsverify: %w", err)
	}
	deadline := strconv.Itoa(int(max(s.Deadline, time.Second)/time.Second)) + "s"
	// A guard against a hung harness, well past the command's own deadline.
	ctx, cancel := context.WithTimeout(ctx, s.Deadline+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", s.script, s.seed, out, deadline, command)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		Setpgid:    true,
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Report{}, fmt.Errorf("nsverify: the harness failed on %q: %w: %s", command, err, tail(stderr.Bytes()))
	}
	rep, err := parseRecords(command, stdout.Bytes())
	if err != nil {
		return Report{}, err
	}
	trace, err := os.ReadFile(filepath.Join(out, "trace"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Report{}, fmt.Errorf("nsverify: %w", err)
	}
	rep.addTrace(trace)
	rep.Stdout = readTail(filepath.Join(out, "stdout"))
	rep.Stderr = readTail(filepath.Join(out, "stderr"))
	return rep, nil
}

// tailBytes is how much of a command's output a report keeps.
const tailBytes = 2048

func tail(b []byte) string {
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return string(b)
}

// readTail reads the last tailBytes of a file; "" when it is absent (the
// command never started).
func readTail(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tailBytes {
		_, _ = f.Seek(-tailBytes, io.SeekEnd)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tailBytes))
	return string(b)
}
