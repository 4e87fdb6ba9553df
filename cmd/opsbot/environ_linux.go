package main

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
)

// blankProcEnviron removes the named variables from the block the kernel
// shows as /proc/self/environ: unsetting a variable only changes the
// process's copies, and any process of the same user (a local command:
// `cat /proc/$PPID/environ`) could still read the original. The other
// variables are moved up over them and the rest of the block is zeroed,
// so it shows neither the names nor the lengths of what was removed (the
// block's size, which /proc/PID/stat shows anyway, stays). The Go runtime
// copied the block at start; C code's environ (SQLite's getenv) is
// pointed at fresh copies first, as moving strings under it would give it
// wrong values. It does what it can and stays silent otherwise: the
// variables are unset either way.
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
	compacted, changed := withoutVars(block, names)
	if !changed {
		return
	}
	for _, kv := range os.Environ() { // with cgo, setenv copies each string out of the block
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			os.Setenv(name, value)
		}
	}
	mem.WriteAt(compacted, start)
}

// withoutVars is an environment block (NAME=value entries, each ended by
// a NUL) without the named variables: the others in their order, then
// zeros to the block's length.
func withoutVars(block []byte, names []string) ([]byte, bool) {
	out := make([]byte, 0, len(block))
	changed := false
	for _, kv := range bytes.Split(bytes.TrimRight(block, "\x00"), []byte{0}) {
		name, _, _ := bytes.Cut(kv, []byte("="))
		if slices.Contains(names, string(name)) {
			changed = true
			continue
		}
		if len(kv) > 0 {
			out = append(append(out, kv...), 0)
		}
	}
	return append(out, make([]byte, len(block)-len(out))...), changed
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
