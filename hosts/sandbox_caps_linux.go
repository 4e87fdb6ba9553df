package hosts

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropPrivileges leaves the launcher, and so the command, without
// capabilities: the bounding set emptied (root's programs get nothing on
// exec), ambient, inheritable, permitted and effective cleared (on
// this thread: see restrict). It keeps CAP_SYSLOG alone where the kernel restricts dmesg to
// it and the bot has it: dmesg is a diagnostic an SRE
// expects to work, and the seccomp filter allows only syslog(2)'s reading
// actions, so the ring buffer can be read but neither cleared nor
// consumed. A root bot also joins the groups that read logs (adm,
// systemd-journal): without CAP_DAC_OVERRIDE root reads only what it
// owns, and /var/log holds files of syslog:adm and the like.
func dropPrivileges() error {
	ns := inUserNS()
	if os.Geteuid() == 0 && !ns {
		if err := joinLogGroups(); err != nil {
			return fmt.Errorf("groups: %w", err)
		}
	}
	have, err := effectiveCaps()
	if err != nil {
		return err
	}
	keep := uint64(0)
	if !ns && have&(1<<unix.CAP_SYSLOG) != 0 && dmesgRestricted() && nativeArch() != nil {
		keep = 1 << unix.CAP_SYSLOG
	}
	if have&(1<<unix.CAP_SETPCAP) != 0 {
		if err := dropBounding(keep); err != nil {
			return err
		}
	}
	// EINVAL: a kernel before ambient capabilities (4.3), which has none.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("ambient capabilities: %w", err)
	}
	return setCaps(keep)
}

// dropBounding removes every capability but keep from the bounding set.
func dropBounding(keep uint64) error {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return err
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("cap_last_cap: %w", err)
	}
	for c := 0; c <= last; c++ {
		if keep&(1<<c) != 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	return nil
}

// effectiveCaps is this thread's effective capability set.
func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, fmt.Errorf("capabilities: %w", err)
	}
	return uint64(data[1].Effective)<<32 | uint64(data[0].Effective), nil
}

// setCaps sets this thread's effective and permitted sets to keep,
// and the inheritable set to nothing.
func setCaps(keep uint64) error {
	hdr := &unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := &[2]unix.CapUserData{
		{Effective: uint32(keep), Permitted: uint32(keep)},
		{Effective: uint32(keep >> 32), Permitted: uint32(keep >> 32)},
	}
	if err := unix.Capset(hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	return nil
}

// inUserNS reports whether this process runs in a user namespace other
// than the host's (whose uid_map maps every id to itself).
func inUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && strings.Join(strings.Fields(string(b)), " ") != "0 0 4294967295"
}

// dmesgRestricted reports kernel.dmesg_restrict: the kernel's log is for
// CAP_SYSLOG only.
func dmesgRestricted() bool {
	b, _ := os.ReadFile("/proc/sys/kernel/dmesg_restrict")
	return strings.TrimSpace(string(b)) == "1"
}

// logGroups are the groups whose members read logs on Debian, Ubuntu
// (adm) and wherever systemd keeps a journal (systemd-journal).
var logGroups = []string{"adm", "systemd-journal"}

// joinLogGroups adds the log groups that exist to this process's groups.
func joinLogGroups() error {
	groups, err := syscall.Getgroups()
	if err != nil {
		return err
	}
	add := groupIDs(logGroups)
	if len(add) == 0 {
		return nil
	}
	groups = append(groups, add...)
	slices.Sort(groups)
	return syscall.Setgroups(slices.Compact(groups))
}

// groupIDs looks names up in /etc/group.
func groupIDs(names []string) []int {
	f, err := os.Open("/etc/group")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 || !slices.Contains(names, fields[0]) {
			continue
		}
		if id, err := strconv.Atoi(fields[2]); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
