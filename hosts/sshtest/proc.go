package sshtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Processes returns the pids of the processes on this machine whose
// command line contains substr (what `pgrep -f` matches), excluding the
// caller. Tests use it to prove a killed command left nothing behind.
func Processes(substr string) []int {
	var pids []int
	for _, pid := range allPids() {
		if pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil || len(b) == 0 { // gone, or a zombie (already dead)
			continue
		}
		if strings.Contains(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), substr) {
			pids = append(pids, pid)
		}
	}
	return pids
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
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
