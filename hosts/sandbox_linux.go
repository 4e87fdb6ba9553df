package hosts

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"runtime"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock restricts the calling process and what it executes, never its
// parent, and a Go program cannot restrict only a child it forks. So a
// sandboxed command is started through this very binary in launcher mode
// (argv[1] == sandboxArg): the launcher, started by the bot in a new mount
// namespace (see namespaces; no pid namespace: procps's ps cannot find
// itself in one over the host's /proc), sets up its view of the file
// system, drops its capabilities, restricts itself, and starts the shell,
// which inherits all of it; the launcher stays as the command's child
// subreaper and kills what it leaves behind (see supervise). The mode is entered from this package's init, so that
// every binary that runs local commands — opsbot and the test binaries of
// any package — can be its own launcher without its main knowing.
const sandboxArg = "__opsbot-sandbox__"

// launcherPath is the running binary, whatever it is named and even if
// an upgrade has replaced the file since the bot started.
const launcherPath = "/proc/self/exe"

// exitSandboxFailed is the launcher's exit code when it could not confine
// itself: like bash's 126, the command was not run.
const exitSandboxFailed = 126

// statusFD is the launcher's end of the pipe on which it reports the
// signal that killed the command (launch.end reads it).
const statusFD = 3

// minLandlockABI is the first Landlock ABI that restricts TCP bind and
// connect (Linux 6.7); with less, the sandbox would leave the network open.
const minLandlockABI = 4

func init() {
	if len(os.Args) > 1 && os.Args[1] == sandboxArg {
		os.Exit(sandboxMain(os.Args[2:]))
	}
}

// sandboxMain is the launcher: it confines itself as args say, then runs
// the command and returns its exit code.
func sandboxMain(args []string) int {
	runtime.LockOSThread() // see restrict: one thread is confined
	spec, err := parseLauncherArgs(args)
	if err == nil {
		err = sandboxSupport()
	}
	if err == nil && spec.probe {
		if err = spec.mountView(); err == nil {
			return 0
		}
	}
	if err == nil {
		err = spec.confineSelf()
	}
	if err == nil {
		var code int
		if code, err = spec.supervise(); err == nil {
			return code
		}
	}
	fmt.Fprintf(os.Stderr, "opsbot: the sandbox could not start, so the command did not run: %v\n", err)
	return exitSandboxFailed
}

// launcherSpec is what the launcher was asked: the one writable
// directory, the TCP ports that may be connected to, the secret paths to
// mask, whether it runs in its own namespaces, and the program.
type launcherSpec struct {
	rw    string
	ports []uint16
	hide  []string
	ns    bool
	probe bool // only check that the namespaces work (probeIsolation)
	path  string
	argv  []string
}

// parseLauncherArgs reads `--rw DIR [--connect PORT]… [--hide ENTRY]…
// [--ns 1] -- PATH ARGV…`, or `--probe 1`.
func parseLauncherArgs(args []string) (launcherSpec, error) {
	var s launcherSpec
	for len(args) >= 2 && args[0] != "--" {
		switch args[0] {
		case "--rw":
			s.rw = args[1]
		case "--connect":
			p, err := strconv.ParseUint(args[1], 10, 16)
			if err != nil {
				return s, fmt.Errorf("bad port %q", args[1])
			}
			s.ports = append(s.ports, uint16(p))
		case "--hide":
			s.hide = append(s.hide, args[1])
		case "--ns":
			s.ns = true
		case "--probe":
			s.probe, s.ns = true, true
			return s, nil
		default:
			return s, fmt.Errorf("unknown launcher option %q", args[0])
		}
		args = args[2:]
	}
	if len(args) < 3 || args[0] != "--" || s.rw == "" {
		return s, errors.New("usage: --rw DIR [--connect PORT]... [--hide ENTRY]... [--ns 1] -- PATH ARGV0 [ARG]")
	}
	s.path, s.argv = args[1], args[2:]
	return s, nil
}

// confineSelf confines this thread (see restrict) and what it starts:
// its view of the file system, then its groups and capabilities (while
// it still has the right to change them), then Landlock and the seccomp
// filter.
func (s launcherSpec) confineSelf() error {
	if err := s.mountView(); err != nil {
		return err
	}
	if err := dropPrivileges(); err != nil {
		return err
	}
	if err := s.restrict(); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return installFilter()
}

// sandboxSupport asks the kernel which Landlock ABI it offers.
func sandboxSupport() error {
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err != nil:
		return fmt.Errorf("this kernel has no Landlock (%v); it needs Linux 6.7 or later with landlock in its lsm= boot list", err)
	case abi < minLandlockABI:
		return fmt.Errorf("this kernel's Landlock (ABI %d) cannot restrict network connections; ABI %d (Linux 6.7) or later is needed", abi, minLandlockABI)
	}
	return nil
}
