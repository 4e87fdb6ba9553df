package hosts

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock restricts the calling process and what it executes, never its
// parent, and a Go program cannot restrict only a child it forks. So a
// sandboxed command is started through this very binary in launcher mode
// (argv[1] == sandboxArg): the launcher restricts itself, then execs the
// shell, which inherits the restriction. The mode is entered from this
// package's init, so that every binary that runs local commands — opsbot
// and the test binaries of any package — can be its own launcher without
// its main knowing.
const sandboxArg = "__opsbot-sandbox__"

// launcherPath is the running binary, whatever it is named and even if
// an upgrade has replaced the file since the bot started.
const launcherPath = "/proc/self/exe"

// exitSandboxFailed is the launcher's exit code when it could not confine
// itself: like bash's 126, the command was not run.
const exitSandboxFailed = 126

// minLandlockABI is the first Landlock ABI that restricts TCP bind and
// connect (Linux 6.7); with less, the sandbox would leave the network open.
const minLandlockABI = 4

func init() {
	if len(os.Args) > 1 && os.Args[1] == sandboxArg {
		os.Exit(sandboxMain(os.Args[2:]))
	}
}

// sandboxMain is the launcher: it confines itself as args say, then
// replaces itself with the command. It returns only on failure.
func sandboxMain(args []string) int {
	spec, err := parseLauncherArgs(args)
	if err == nil {
		err = sandboxSupport()
	}
	if err == nil {
		err = spec.restrict()
	}
	if err == nil {
		err = syscall.Exec(spec.path, spec.argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "opsbot: the sandbox could not start, so the command did not run: %v\n", err)
	return exitSandboxFailed
}

// launcherSpec is what the launcher was asked: the one writable
// directory, the TCP ports that may be connected to, and the program.
type launcherSpec struct {
	rw    string
	ports []uint16
	path  string
	argv  []string
}

// parseLauncherArgs reads `--rw DIR [--connect PORT]… -- PATH ARGV…`.
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
		default:
			return s, fmt.Errorf("unknown launcher option %q", args[0])
		}
		args = args[2:]
	}
	if len(args) < 3 || args[0] != "--" || s.rw == "" {
		return s, errors.New("usage: --rw DIR [--connect PORT]... -- PATH ARGV0 [ARG]")
	}
	s.path, s.argv = args[1], args[2:]
	return s, nil
}

// restrict confines this process (every thread) and what it executes.
// The handled rights are those of ABI 7 (file system, TCP, IPC scopes),
// lowered to what the kernel has: sandboxSupport has made sure that it
// has at least ABI 4, so files and TCP are always covered.
func (s launcherSpec) restrict() error {
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(s.rw).WithRefer(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full").IgnoreIfMissing(),
		landlock.RWFiles("/dev/tty").WithIoctlDev().IgnoreIfMissing(),
	}
	for _, p := range s.ports {
		rules = append(rules, landlock.ConnectTCP(p))
	}
	return landlock.V7.BestEffort().Restrict(rules...)
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
