package main

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
)

// blankProcEnviron overwrites the values of the named variables in the
// block the kernel shows as /proc/self/environ: unsetting a variable only
// changes the process's copies, and any process of the same user (a local
// command: `cat /proc/$PPID/environ`) could still read the original. The
// Go runtime copied the block at start, so nothing in Go refers to it; C
// code sees the values blanked. It does what it can and stays silent
// otherwise: the variables are unset either way.
func blankProcEnviron(names []string) {
	if len(names) == 0 {
		return
	}
	start, end, ok := environBlock()
	if !ok {
		return
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return
	}
	changed := false
	at := 0
	for _, kv := range bytes.Split(block, []byte{0}) {
		name, _, found := bytes.Cut(kv, []byte("="))
		if found && slices.Contains(names, string(name)) {
			clear(block[at+len(name)+1 : at+len(kv)])
			changed = true
		}
		at += len(kv) + 1
	}
	if changed {
		mem.WriteAt(block, start)
	}
}

// environBlock reads where the environment block lies from
// /proc/self/stat (fields 50 and 51, env_start and env_end).
func environBlock() (start, end int64, ok bool) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name (field 2) may hold blanks; fields after it are
	// counted from the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(stat[i+1:])) // field 3 onwards
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(fields[envStart], 10, 64)
	end, err2 := strconv.ParseInt(fields[envEnd], 10, 64)
	if err1 != nil || err2 != nil || end <= start || end-start > 1<<22 {
		return 0, 0, false
	}
	return start, end, true
}
