package hosts

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter closes what neither Landlock nor the missing
// capabilities close for a command that runs as the same user as the
// host's daemons (root, typically): calls that act on another process by
// its pid, where the kernel's only check is that the uids match —
// renice, ionice, taskset, chrt and prlimit on another process are
// refused (EPERM); on itself (pid 0) they work. It also narrows syslog(2)
// to the actions that read (see dropPrivileges on CAP_SYSLOG), and
// refuses the 32-bit system call ABIs (ENOSYS), whose numbers differ:
// a 32-bit program does not run in the sandbox.

// syslog(2) actions (include/linux/syslog.h) that only read: close and
// open (no-ops), read all (what dmesg does without /dev/kmsg), and the
// sizes. Read (2) consumes what it reads, clear (5) empties the buffer,
// and the console actions change the host.
var syslogReadActions = []uint32{0, 1, 3, 9, 10}

// x32Bit marks a system call of the x32 ABI on x86-64.
const x32Bit = 0x40000000

// seccompArch is the native architecture as seccomp names it, with
// whether x32 calls arrive under it too.
type seccompArch struct {
	audit uint32
	x32   bool
}

// nativeArch is this build's architecture, or nil where the filter is
// not written for it (then it is not installed, and CAP_SYSLOG not kept).
func nativeArch() *seccompArch {
	switch runtime.GOARCH {
	case "amd64":
		return &seccompArch{audit: unix.AUDIT_ARCH_X86_64, x32: true}
	case "arm64":
		return &seccompArch{audit: unix.AUDIT_ARCH_AARCH64}
	}
	return nil
}

// installFilter installs the filter on this thread (see restrict); after
// no_new_privs, as the kernel requires of a process without
// CAP_SYS_ADMIN.
func installFilter() error {
	a := nativeArch()
	if a == nil {
		return nil
	}
	prog := seccompProgram(a)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}

// Offsets in struct seccomp_data: the call's number, the architecture,
// and the low halves of its arguments (these machines are little-endian;
// the arguments tested are ints, but for prlimit's pointer).
const (
	offNr       = 0
	offArch     = 4
	offArg0     = 16
	offArg1     = 24
	offArg2     = 32
	offArg2High = 36
)

// seccompProgram is the classic BPF program of installFilter.
func seccompProgram(a *seccompArch) []unix.SockFilter {
	var p bpf
	p.load(offArch).jeq(a.audit, "native", "nosys")
	p.label("native").load(offNr)
	if a.x32 {
		p.jge(x32Bit, "nosys", "calls")
	}
	p.label("calls")
	for _, c := range []struct {
		nr    uint32
		check string
	}{
		{unix.SYS_SYSLOG, "syslog"}, {unix.SYS_SETPRIORITY, "prio"}, {unix.SYS_IOPRIO_SET, "ioprio"},
		{unix.SYS_PRLIMIT64, "prlimit"}, {unix.SYS_SCHED_SETAFFINITY, "self"}, {unix.SYS_SCHED_SETSCHEDULER, "self"},
		{unix.SYS_SCHED_SETPARAM, "self"}, {unix.SYS_SCHED_SETATTR, "self"},
	} {
		p.jeq(c.nr, c.check, "")
	}
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("syslog").load(offArg0)
	for _, act := range syslogReadActions {
		p.jeq(act, "allow", "")
	}
	p.ret(deny)
	// setpriority(which, who): PRIO_PROCESS (0) or PRIO_PGRP (1) of 0,
	// the caller or its group; never PRIO_USER.
	p.label("prio").load(offArg0).jgt(1, "deny", "").load(offArg1).jeq(0, "allow", "deny")
	// ioprio_set(IOPRIO_WHO_PROCESS (1), 0): the caller only.
	p.label("ioprio").load(offArg0).jeq(1, "", "deny").load(offArg1).jeq(0, "allow", "deny")
	// prlimit(pid, resource, new, old): any pid to read, its own to set.
	p.label("prlimit").load(offArg0).jeq(0, "allow", "").load(offArg2).jeq(0, "", "deny").load(offArg2High).jeq(0, "allow", "deny")
	p.label("self").load(offArg0).jeq(0, "allow", "deny")
	p.label("allow").ret(unix.SECCOMP_RET_ALLOW)
	p.label("deny").ret(deny)
	p.label("nosys").ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	return p.assemble()
}

const deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)

// bpf assembles a classic BPF program whose jumps name labels ("": the
// next instruction).
type bpf struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	labels map[string]int
}

func (p *bpf) label(name string) *bpf {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
	return p
}

func (p *bpf) load(off uint32) *bpf {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
	return p
}

func (p *bpf) ret(k uint32) *bpf {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
	return p
}

func (p *bpf) jeq(k uint32, yes, no string) *bpf { return p.jump(unix.BPF_JEQ, k, yes, no) }
func (p *bpf) jgt(k uint32, yes, no string) *bpf { return p.jump(unix.BPF_JGT, k, yes, no) }
func (p *bpf) jge(k uint32, yes, no string) *bpf { return p.jump(unix.BPF_JGE, k, yes, no) }

func (p *bpf) jump(op uint16, k uint32, yes, no string) *bpf {
	if p.jumps == nil {
		p.jumps = map[int][2]string{}
	}
	p.jumps[len(p.ins)] = [2]string{yes, no}
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
	return p
}

// assemble resolves the labels into the jumps' offsets (forward only,
// under 256: this program is small).
func (p *bpf) assemble() []unix.SockFilter {
	for at, to := range p.jumps {
		off := func(label string) uint8 {
			if label == "" {
				return 0
			}
			return uint8(p.labels[label] - at - 1)
		}
		p.ins[at].Jt, p.ins[at].Jf = off(to[0]), off(to[1])
	}
	return p.ins
}
