package sshtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Processes returns the pids of the processes on this machine whose
// command line contains substr (what `pgrep -f` matches), excluding the
// caller. Tests use it to prove a killed command left nothing behind.
func Processes(substr string) []int {
	var pids []int
	for _, pid := range allPids() {
		if pid != os.Getpid() && matches(pid, substr) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// matches reports whether pid's command line contains substr; a process
// that is gone, or a zombie (already dead), matches nothing.
func matches(pid int, substr string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return false
	}
	return strings.Contains(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), substr)
}

// descendants returns every process below pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, p := range allPids() {
		if pp, ok := parentOf(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads the parent pid from /proc/PID/stat; the command name in
// it may hold spaces and parentheses, so fields are counted after the last
// ')'.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // state, ppid, ...
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

func allPids() []int {
	// A listing that failed part way (EMFILE while tests hold many
	// descriptors) is short: read it again rather than miss processes.
	entries, err := os.ReadDir("/proc")
	for try := 0; err != nil && try < 3; try++ {
		entries, err = os.ReadDir("/proc")
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Proc is a process found by its command line and held by a pidfd, so
// that its end can be awaited as an event (no polling of /proc) and a
// reused pid can never be mistaken for it.
type Proc struct {
	Pid int
	fd  int
}

// Find returns the processes whose command line contains substr now (as
// Processes), each held open until Close. A process that ends before it
// is held is left out: it is already gone.
func Find(substr string) ([]*Proc, error) {
	var procs []*Proc
	for _, pid := range Processes(substr) {
		p, err := Hold(pid)
		if err != nil {
			closeAll(procs)
			return nil, err
		}
		// The pid may have been reused between the scan and the open:
		// the process the pidfd holds must still be the one matched.
		if p == nil || !matches(pid, substr) {
			p.Close()
			continue
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// Hold holds the process pid by a pidfd until Close. It returns nil (and
// no error) when there is no such process: it is already gone.
func Hold(pid int) (*Proc, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sshtest: pidfd_open %d: %w", pid, err)
	}
	return &Proc{Pid: pid, fd: fd}, nil
}

func closeAll(procs []*Proc) {
	for _, p := range procs {
		p.Close()
	}
}

// Exited reports whether p has ended (it may not be reaped yet). A nil p
// (from Hold: no such process) has.
func (p *Proc) Exited() bool { return p.wait(0) }

// Wait blocks until p ends or d passes, and reports whether it ended.
// The kernel wakes it when p exits: d is only a bound for a clear failure.
func (p *Proc) Wait(d time.Duration) bool {
	return p.wait(max(d.Milliseconds(), 1))
}

func (p *Proc) wait(ms int64) bool {
	if p == nil {
		return true
	}
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(ms))
		switch {
		case err == nil:
			return n > 0
		case !errors.Is(err, unix.EINTR):
			panic(fmt.Sprintf("sshtest: poll on the pidfd of %d: %v", p.Pid, err))
		}
		ms = max(time.Until(deadline).Milliseconds(), 0) // interrupted: poll again for the rest
	}
}

// Close releases p's pidfd. A nil p is fine.
func (p *Proc) Close() {
	if p != nil {
		_ = unix.Close(p.fd)
	}
}
