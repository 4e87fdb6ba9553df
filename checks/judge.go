package checks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/opsbot/opsbot/hosts"
)

// Status is the judgement of one check on one host.
type Status string

// The statuses, from best to worst for sorting.
const (
	StatusOK          Status = "ok"
	StatusWarn        Status = "warn"
	StatusFail        Status = "fail"
	StatusUnreachable Status = "unreachable"
)

// bad reports whether s needs someone: a failure or an unreachable host.
func (s Status) bad() bool { return s == StatusFail || s == StatusUnreachable }

// Result is one check on one host, judged.
type Result struct {
	Host  string
	Check string
	Status
	// Value is the number read from the output, when HasValue; Unit is
	// what followed it ("%" or "").
	Value    float64
	HasValue bool
	Unit     string
	// Output is an excerpt of the output (first line, trimmed).
	Output string
	// Detail says why the status in plain words, e.g. "exit 2 (expected 0)".
	Detail   string
	Duration time.Duration
	// Since is when this host's check entered Status.
	Since time.Time
	// Prev is the previous run's result for this host and check, if any.
	Prev *Result
}

// excerptRunes bounds Result.Output.
const excerptRunes = 120

// numberRE finds the first number of an output standing on its own (not
// the 1 of sda1 or the 1024 of 1024-blocks), with a unit of % if any.
var numberRE = regexp.MustCompile(`(?:^|[\s=:(\[])(-?\d+(?:\.\d+)?)(%?)(?:$|[\s,;)\]])`)

// Judge turns one host's outcome of check c into a Result.
func Judge(c Check, hr hosts.HostResult) Result {
	r := Result{Host: hr.Host.Name, Check: c.Name, Status: StatusOK, Duration: hr.Result.Duration}
	out := strings.TrimSpace(string(hr.Result.Output))
	r.Output = excerpt(out)
	switch {
	case hr.Err != nil:
		r.Status, r.Detail = StatusUnreachable, reachProblem(hr.Err)
	case hr.Result.TimedOut:
		r.Status, r.Detail = StatusFail, "timed out after "+hr.Result.Duration.Round(time.Second).String()
	case hr.Result.Signal != "":
		r.Status, r.Detail = StatusFail, "killed by "+hr.Result.Signal
	case hr.Result.ExitCode != c.Expect.Exit:
		r.Status, r.Detail = StatusFail, fmt.Sprintf("exit %d (expected %d)", hr.Result.ExitCode, c.Expect.Exit)
	default:
		judgeOutput(c.Expect, out, &r)
	}
	return r
}

// judgeOutput applies output_matches and the thresholds to a command that
// exited as expected.
func judgeOutput(e Expect, out string, r *Result) {
	if e.OutputMatches != "" {
		if re, err := matcher(e.OutputMatches); err != nil || !re.MatchString(out) {
			r.Status, r.Detail = StatusFail, "output does not match "+e.OutputMatches
			return
		}
	}
	m := numberRE.FindStringSubmatch(out)
	if m == nil {
		if e.readsNumber() {
			r.Status, r.Detail = StatusFail, "no number in the output"
		}
		return
	}
	r.Value, _ = strconv.ParseFloat(m[1], 64)
	r.HasValue, r.Unit = true, m[2]
	switch {
	case e.FailAbove != nil && r.Value > *e.FailAbove:
		r.Status, r.Detail = StatusFail, fmt.Sprintf("%s is above %s", r.value(), formatNum(*e.FailAbove, r.Unit))
	case e.WarnAbove != nil && r.Value > *e.WarnAbove:
		r.Status, r.Detail = StatusWarn, fmt.Sprintf("%s is above %s", r.value(), formatNum(*e.WarnAbove, r.Unit))
	}
}

// matchers caches compiled output_matches: a run judges the same few
// patterns on every host.
var matchers sync.Map // pattern → *regexp.Regexp

func matcher(pattern string) (*regexp.Regexp, error) {
	if re, ok := matchers.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	matchers.Store(pattern, re)
	return re, nil
}

// value is the result's number with its unit, e.g. "85%".
func (r Result) value() string { return formatNum(r.Value, r.Unit) }

func formatNum(v float64, unit string) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + unit
}

// excerpt is the first line of out, at most excerptRunes long.
func excerpt(out string) string {
	line, _, more := strings.Cut(out, "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > excerptRunes {
		line = string([]rune(line)[:excerptRunes-1]) + "…"
	} else if more {
		line += " …"
	}
	return line
}

// reachProblem says in plain words why a command could not run.
func reachProblem(err error) string {
	var ne net.Error
	switch msg := err.Error(); {
	case errors.Is(err, context.Canceled):
		return "the run was cancelled before this host answered"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is sshd running?)"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "no answer before the connect timeout"
	case strings.Contains(msg, "authentication"):
		return "ssh authentication failed"
	case strings.Contains(msg, "knownhosts") || strings.Contains(msg, "host key"):
		return "its host key is not trusted (ssh.known_hosts)"
	case strings.Contains(msg, "connection lost"):
		return "the connection was lost while the check ran"
	}
	return "could not run the check on it"
}
