package hosts

import (
	"errors"
	"fmt"
	"os"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Everything the launcher changes about itself — capabilities,
// no_new_privs, Landlock, seccomp — it changes on its main thread, the
// one its init runs on (the runtime keeps package init there), and it
// starts the command from that same thread, which the command's process
// is a copy of. It cannot change every thread at once: go-landlock does
// that with libpsx, which finds the threads in /proc/<getpid()>/task, and
// in the sandbox's pid namespace getpid() is 1 while /proc is the host's.

// landlockRights are the access rights a ruleset handles, by ABI, up to
// ABI 7 (later ABIs add pathname UNIX sockets, which systemctl and the
// like need, and UDP: not handled).
type landlockRights struct{ fs, net, scoped uint64 }

// handledRights are what the kernel's ABI abi lets a ruleset handle.
func handledRights(abi int) landlockRights {
	var r landlockRights
	switch {
	case abi >= 5:
		r.fs = ll.AccessFSIoctlDev<<1 - 1
	case abi >= 3:
		r.fs = ll.AccessFSTruncate<<1 - 1
	case abi == 2:
		r.fs = ll.AccessFSRefer<<1 - 1
	default:
		r.fs = ll.AccessFSMakeSym<<1 - 1
	}
	if abi >= 4 {
		r.net = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		r.scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	return r
}

// restrict applies the Landlock ruleset to this thread: read and execute
// everywhere, everything in the private directory, read and write the
// harmless devices, TCP connect to the ports; it sets no_new_privs
// first, so setuid programs and file capabilities give nothing.
func (s launcherSpec) restrict() error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return err
	}
	h := handledRights(abi)
	fd, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{HandledAccessFS: h.fs, HandledAccessNet: h.net, Scoped: h.scoped}, 0)
	if err != nil {
		return fmt.Errorf("ruleset: %w", err)
	}
	defer unix.Close(fd)
	const read = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	const device = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	rules := []struct {
		path   string
		rights uint64
	}{
		{"/", read}, {s.rw, h.fs},
		{"/dev/null", device}, {"/dev/zero", device}, {"/dev/full", device},
		{"/dev/tty", device | ll.AccessFSIoctlDev},
	}
	for _, r := range rules {
		if err := addPathRule(fd, r.path, r.rights&h.fs); err != nil {
			return err
		}
	}
	for _, p := range s.ports {
		if err := ll.LandlockAddNetPortRule(fd, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(p)}, 0); err != nil {
			return fmt.Errorf("port %d: %w", p, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return ll.LandlockRestrictSelf(fd, 0)
}

// addPathRule grants rights beneath path; a device that does not exist
// needs no rule.
func addPathRule(fd int, path string, rights uint64) error {
	f, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) && path != "/" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(f)
	if err := ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: f}, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
