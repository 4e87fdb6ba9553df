package hosts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaces starts the launcher in a mount namespace of its own, where
// it masks the secret paths and mounts everything read-only (mountView).
// A bot that is not root needs a user namespace for it, where it keeps
// its own uid and gid.
//
// Not a pid namespace, though that would end the command's leftovers by
// itself: with the host's /proc kept (as bwrap --bind /proc /proc, so
// that ps lists the host's processes), procps looks itself up as
// /proc/<its pid in the namespace>, which on the host is another
// process or none — "fatal library error, lookup self" — and ps is the
// first thing an SRE runs. So the launcher is a subreaper instead (see
// supervise), and the seccomp filter refuses what a pid namespace would
// have hidden: renice, ionice, taskset and prlimit of other processes.
func namespaces(a *syscall.SysProcAttr, userns bool) {
	a.Cloneflags |= syscall.CLONE_NEWNS
	if !userns {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// probeIsolation starts the launcher in its namespace once, with the
// same file system set-up as for a command, and reports whether that
// worked: root tries without a user namespace first.
func probeIsolation() (userns bool, err error) {
	if os.Geteuid() == 0 && tryNamespaces(false) == nil {
		return false, nil
	}
	if err := tryNamespaces(true); err != nil {
		return true, fmt.Errorf("%v%s", err, userNSHint())
	}
	return true, nil
}

// tryNamespaces runs `launcher --probe 1` in the namespace.
func tryNamespaces(userns bool) error {
	cmd := exec.Command(launcherPath, "opsbot-sandbox", sandboxArg, "--probe", "1")
	cmd.Args = cmd.Args[1:]
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	dieWithParent(cmd.SysProcAttr)
	namespaces(cmd.SysProcAttr, userns)
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		_, msg, _ = strings.Cut(msg, "did not run: ")
		return fmt.Errorf("no mount namespace: %s", msg)
	}
	return fmt.Errorf("no mount namespace: %v", err)
}

// userNSHint names the kernel setting that turns unprivileged user
// namespaces off, when one does.
func userNSHint() string {
	for _, s := range []struct{ file, off, name string }{
		{"/proc/sys/kernel/unprivileged_userns_clone", "0", "kernel.unprivileged_userns_clone=0"},
		{"/proc/sys/user/max_user_namespaces", "0", "user.max_user_namespaces=0"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "kernel.apparmor_restrict_unprivileged_userns=1"},
	} {
		if b, err := os.ReadFile(s.file); err == nil && strings.TrimSpace(string(b)) == s.off {
			return "; unprivileged user namespaces are off (" + s.name + ")"
		}
	}
	return ""
}

// mountView makes the launcher's view of the file system, in its own
// mount namespace (nothing when not in one): the secret paths masked,
// then every mount read-only — so that no chmod, chown, utime or
// setxattr reaches a file, even one the bot's user owns, which Landlock
// does not cover — but the private directory.
func (s launcherSpec) mountView() error {
	if !s.ns {
		return nil
	}
	// Mounts made here must not propagate to the host's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	if s.rw != "" {
		if err := s.mask(); err != nil {
			return err
		}
		if err := unix.Mount(s.rw, s.rw, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("private directory: %w", err)
		}
	}
	if err := setMountAttr("/", unix.AT_RECURSIVE, unix.MOUNT_ATTR_RDONLY, 0); err != nil {
		return fmt.Errorf("read-only file system: %w", err)
	}
	if s.rw == "" {
		return nil
	}
	return setMountAttr(s.rw, 0, 0, unix.MOUNT_ATTR_RDONLY)
}

// setMountAttr sets and clears attributes of the mount at path.
func setMountAttr(path string, flags uint, set, clr uint64) error {
	return unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: set, Attr_clr: clr})
}

// Secret paths are masked in a mount namespace rather than left out of
// Landlock's read rules: Landlock only grants, so leaving /etc/shadow out
// means granting every other entry of /etc, one by one, and anything made
// in /etc later would be unreadable; a mount over the path hides exactly
// it, and an SRE sees that it is hidden (Permission denied), not that it
// is gone.

// mask mounts an empty, unreadable file or directory over each secret
// path that exists: both live in a scratch tmpfs mounted for a moment on
// the private directory (still empty) and detached once bound.
func (s launcherSpec) mask() error {
	paths := hiddenPaths(s.hide, homeDirs(), cwd())
	more, err := scanned(bareNames(s.hide), s.argv, cwd()) // sandbox_hide_scan.go
	if err != nil {
		return err
	}
	paths = outermost(append(paths, more...))
	if len(paths) == 0 {
		return nil
	}
	if err := unix.Mount("tmpfs", s.rw, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0"); err != nil {
		return fmt.Errorf("masks: %w", err)
	}
	defer func() { _ = unix.Unmount(s.rw, unix.MNT_DETACH) }()
	file, dir := filepath.Join(s.rw, "f"), filepath.Join(s.rw, "d")
	if err := os.WriteFile(file, nil, 0); err != nil {
		return fmt.Errorf("masks: %w", err)
	}
	if err := os.Mkdir(dir, 0); err != nil {
		return fmt.Errorf("masks: %w", err)
	}
	for _, p := range paths {
		if err := maskOne(p, file, dir); err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
	}
	return nil
}

// maskOne binds the empty file or directory over p. A path gone since it
// was listed needs no mask.
func maskOne(p, file, dir string) error {
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	src := file
	if fi.IsDir() {
		src = dir
	}
	err = unix.Mount(src, p, "", unix.MS_BIND, "")
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// cwd is the launcher's working directory, the command's, or "".
func cwd() string {
	d, _ := os.Getwd()
	return d
}
