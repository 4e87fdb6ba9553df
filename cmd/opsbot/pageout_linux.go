package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseStartupCode asks the kernel to reclaim the pages of the
// executable's read-only mappings (code, read-only data, the function
// tables) that starting touched: most run once, and the kernel maps a
// whole fault-around window or large folio per fault, so a freshly built
// binary keeps ~40 MB of its own file resident (issue 28 item 8). The
// pages are clean copies of the file, so nothing is lost: a page used
// again is read back. Writable mappings are left alone, and MADV_PAGEOUT
// never discards a private page it cannot write back (the relocated
// RELRO segment stays; MADV_DONTNEED there crashed SQLite). It returns
// how many bytes it advised; kernels before 5.4 refuse the advice, which
// changes nothing.
func releaseStartupCode() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	syncExecutable(exe)
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	advised := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		start, end, ok := readOnlyMappingOf(sc.Text(), exe)
		if !ok {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_PAGEOUT); errno != 0 {
			return advised, errno
		}
		advised += int(end - start)
	}
	return advised, sc.Err()
}

// readOnlyMappingOf parses a /proc/self/maps line and reports the range
// of a mapping of file exe that cannot be written.
func readOnlyMappingOf(line, exe string) (start, end uintptr, ok bool) {
	f := strings.Fields(line)
	if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") {
		return 0, 0, false
	}
	lo, hi, found := strings.Cut(f[0], "-")
	a, errA := strconv.ParseUint(lo, 16, 64)
	b, errB := strconv.ParseUint(hi, 16, 64)
	if !found || errA != nil || errB != nil || b <= a {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}

// syncExecutable writes back the executable's pages still dirty in the
// page cache (a binary just built or copied): the kernel reclaims only
// clean pages, so without it a bot started straight after its build kept
// them all. Best effort: a file it cannot open changes nothing.
func syncExecutable(exe string) {
	f, err := os.Open(exe)
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.Fdatasync(int(f.Fd()))
}
