package nsverify

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Report is what one run did.
type Report struct {
	Command string
	// Exit is the command's exit status; 124 or 137 when it ran until its
	// deadline, 127 when bash did not find the program.
	Exit int
	// Changes are the paths whose existence, type, mode, owner or content
	// differ after the run.
	Changes []Change
	// SideEffects are changes every run of some read-only programs makes
	// and nothing relies on (see sideEffects); Harmless ignores them.
	SideEffects []Change
	// Copied are paths the command opened for writing (or chmod'ed to the
	// same mode) without changing them.
	Copied []string
	// Egress are connects and sends to anywhere but loopback.
	Egress []Attempt
	// Loopback are connects and sends to 127.0.0.0/8 or ::1: the default
	// egress allow list, and nothing listens there in the namespace.
	Loopback []Attempt
	// Privileged are calls that change the machine rather than files
	// (mount, clock, hostname, modules, reboot), whether or not they
	// succeeded.
	Privileged []string
	// NetBefore and NetAfter are the namespace's links, addresses, routes,
	// rules and neighbours, set only when they differ.
	NetBefore, NetAfter string
	// Stdout and Stderr are the tails of the command's output.
	Stdout, Stderr string
}

// Change is one path the run changed.
type Change struct {
	Path          string // relative to the root, e.g. "etc/passwd"
	Before, After string // "absent", or type, mode, owner and content hash
}

// Harmless reports whether the run changed nothing and reached nowhere:
// no changed path, no egress, no privileged call, the same network state.
func (r Report) Harmless() bool {
	return len(r.Changes) == 0 && len(r.Egress) == 0 && len(r.Privileged) == 0 && r.NetBefore == r.NetAfter
}

// TimedOut reports whether the command ran until its deadline.
func (r Report) TimedOut() bool { return r.Exit == 124 || r.Exit == 137 }

// String describes what the run did, for a test failure.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q exited %d", r.Command, r.Exit)
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "\n  changed %s", c)
	}
	for _, a := range r.Egress {
		fmt.Fprintf(&b, "\n  egress: %s", a)
	}
	for _, p := range r.Privileged {
		fmt.Fprintf(&b, "\n  privileged call: %s", p)
	}
	if r.NetBefore != r.NetAfter {
		fmt.Fprintf(&b, "\n  network namespace changed:\n    before: %s\n    after:  %s",
			strings.ReplaceAll(r.NetBefore, "\n", "\n            "), strings.ReplaceAll(r.NetAfter, "\n", "\n            "))
	}
	if !r.Harmless() {
		fmt.Fprintf(&b, "\n  stderr: %s", strings.TrimSpace(r.Stderr))
	}
	return b.String()
}

// parseRecords reads ns.sh's NUL-separated records.
func parseRecords(command string, out []byte) (Report, error) {
	r := Report{Command: command, Exit: -1}
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	bad := func() (Report, error) {
		return Report{}, fmt.Errorf("nsverify: unreadable report for %q: %q", command, tail(out))
	}
	for len(fields) > 0 && fields[0] != "" {
		n := map[string]int{"exit": 1, "net": 2, "changed": 3, "copied": 1}[fields[0]]
		if n == 0 || len(fields) < n+1 {
			return bad()
		}
		f := fields[1 : n+1]
		switch fields[0] {
		case "exit":
			code, err := strconv.Atoi(f[0])
			if err != nil {
				return bad()
			}
			r.Exit = code
		case "net":
			r.NetBefore, r.NetAfter = f[0], f[1]
		case "changed":
			r.Changes = append(r.Changes, Change{Path: f[0], Before: f[1], After: f[2]})
		case "copied":
			r.Copied = append(r.Copied, f[0])
		}
		fields = fields[n+1:]
	}
	if r.Exit < 0 {
		return bad()
	}
	r.splitSideEffects()
	return r, nil
}

// addTrace files the strace log's attempts into the report.
func (r *Report) addTrace(log []byte) {
	for line := range bytes.Lines(log) {
		call, ok := parseCall(string(line))
		if !ok {
			continue
		}
		switch {
		case privileged[call.name]:
			r.Privileged = append(r.Privileged, call.text)
		case call.netAttempt():
			for _, a := range call.attempts() {
				if a.loopback() {
					r.Loopback = append(r.Loopback, a)
				} else {
					r.Egress = append(r.Egress, a)
				}
			}
		}
	}
}
