package checks

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	disk := Check{Name: "disk", Expect: Expect{WarnAbove: ptr(80.0), FailAbove: ptr(90.0)}}
	nginx := Check{Name: "nginx", Expect: Expect{OutputMatches: "^active$"}}
	exit1 := Check{Name: "grep", Expect: Expect{Exit: 1}}
	out := func(s string, code int) hosts.HostResult {
		return hosts.HostResult{Host: hosts.Host{Name: "web-1"}, Result: hosts.Result{ExitCode: code, Output: []byte(s)}}
	}
	refused := fmt.Errorf("hosts: web-1: connect: %w", &fakeOpError{syscall.ECONNREFUSED})
	tests := []struct {
		name   string
		check  Check
		in     hosts.HostResult
		status Status
		value  string // "" when no number is read
		detail string
	}{
		{"below warn", disk, out("42\n", 0), StatusOK, "42", ""},
		{"percent kept as unit", disk, out("/dev/sda1 85% /", 0), StatusWarn, "85%", "85% is above 80%"},
		{"at warn is ok", disk, out("80", 0), StatusOK, "80", ""},
		{"above fail", disk, out("93.5", 0), StatusFail, "93.5", "93.5 is above 90"},
		{"negative number", disk, out("-3", 0), StatusOK, "-3", ""},
		{"number inside a word is not read", disk, out("sda1 1024-blocks use=95%", 0), StatusFail, "95%", "95% is above 90%"},
		{"number missing", disk, out("df: /: No such file", 0), StatusFail, "", "no number in the output"},
		{"empty output", disk, out("", 0), StatusFail, "", "no number in the output"},
		{"exit code", disk, out("42", 2), StatusFail, "", "exit 2 (expected 0)"},
		{"expected non-zero exit", exit1, out("", 1), StatusOK, "", ""},
		{"expected non-zero got zero", exit1, out("match", 0), StatusFail, "", "exit 0 (expected 1)"},
		{"output matches, trailing newline", nginx, out("active\n", 0), StatusOK, "", ""},
		{"output does not match", nginx, out("inactive\n", 0), StatusFail, "", "output does not match ^active$"},
		{"number without thresholds is kept", nginx, out("active", 0), StatusOK, "", ""},
		{"timeout", disk, hosts.HostResult{Host: hosts.Host{Name: "web-1"}, Result: hosts.Result{ExitCode: 124, TimedOut: true, Duration: 30 * time.Second}},
			StatusFail, "", "timed out after 30s"},
		{"killed", disk, hosts.HostResult{Host: hosts.Host{Name: "web-1"}, Result: hosts.Result{ExitCode: 137, Signal: "KILL"}}, StatusFail, "", "killed by KILL"},
		{"unreachable", disk, hosts.HostResult{Host: hosts.Host{Name: "web-1"}, Result: hosts.Result{ExitCode: -1}, Err: refused},
			StatusUnreachable, "", "connection refused (is sshd running?)"},
		{"cancelled", disk, hosts.HostResult{Host: hosts.Host{Name: "web-1"}, Result: hosts.Result{ExitCode: -1}, Err: context.Canceled},
			StatusUnreachable, "", "the run was cancelled before this host answered"},
		{"unknown error is plain words", disk, hosts.HostResult{Host: hosts.Host{Name: "web-1"}, Err: errors.New("hosts: web-1: x: y: z")},
			StatusUnreachable, "", "could not run the check on it"},
	}
	for _, tt := range tests {
		r := Judge(tt.check, tt.in)
		value := ""
		if r.HasValue {
			value = r.value()
		}
		if r.Status != tt.status || r.Detail != tt.detail || (tt.value != "" && value != tt.value) || (tt.value == "" && tt.check.Name == "disk" && r.HasValue) {
			t.Errorf("%s: Judge = %s value %q detail %q; want %s value %q detail %q", tt.name, r.Status, value, r.Detail, tt.status, tt.value, tt.detail)
		}
		if r.Host != "web-1" || r.Check != tt.check.Name {
			t.Errorf("%s: result names %s/%s", tt.name, r.Host, r.Check)
		}
	}
}

func TestJudgeExcerpt(t *testing.T) {
	t.Parallel()
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	r := Judge(Check{Name: "c"}, hosts.HostResult{Result: hosts.Result{Output: append(long, "\nsecond line"...)}})
	if runes(r.Output) != excerptRunes || r.Output[len(r.Output)-3:] != "…" {
		t.Errorf("a long output's excerpt is %d runes: %q", runes(r.Output), r.Output)
	}
	r = Judge(Check{Name: "c"}, hosts.HostResult{Result: hosts.Result{Output: []byte("  first  \nsecond\n")}})
	if r.Output != "first …" {
		t.Errorf("excerpt = %q; want the first line and a mark that more followed", r.Output)
	}
}

// fakeOpError stands in for a *net.OpError around a syscall error.
type fakeOpError struct{ err error }

func (e *fakeOpError) Error() string { return "dial tcp 127.0.0.1:22: " + e.err.Error() }
func (e *fakeOpError) Unwrap() error { return e.err }
