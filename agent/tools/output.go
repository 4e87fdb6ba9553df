package tools

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/textcut"
	"github.com/opsbot/opsbot/hosts"
)

// maxToolResult caps what one command's results hand the model, all hosts
// together: a fan-out over 50 hosts must not fill the context. Each host
// gets an equal share, never under minHostShare.
const (
	maxToolResult = 48 << 10
	minHostShare  = 2 << 10
)

// formatResults renders per-host outcomes for the model and a summary for
// people. Each host's output is framed and labelled with the host and the
// command, as data that is not to be obeyed; a fan-out starts with one
// line per host, so the model sees every host's outcome even when the
// outputs are cut, and hosts that printed the same thing share one frame.
func formatResults(command string, results []hosts.ExecResult) agent.ToolResult {
	var b strings.Builder
	failed := 0
	for _, r := range results {
		if r.Err != nil || r.ExitCode != 0 || r.Killed {
			failed++
		}
	}
	if len(results) > 1 {
		fmt.Fprintf(&b, "`%s` on %d hosts: %d ok, %d failed.\n", command, len(results), len(results)-failed, failed)
		for _, r := range results {
			fmt.Fprintf(&b, "- %s: %s\n", r.Host, hostStatus(r))
		}
		b.WriteString("\n")
	}
	groups := sameOutput(results)
	share := max(maxToolResult/max(len(groups), 1), minHostShare)
	for _, g := range groups {
		writeOutput(&b, command, g, share)
	}
	res := agent.ToolResult{Content: b.String(), IsError: failed > 0}
	if len(results) == 1 {
		res.Summary = hostStatus(results[0])
	} else {
		res.Summary = fmt.Sprintf("%d hosts, %d failed", len(results), failed)
	}
	return res
}

// outputGroup is the hosts that printed the same output and ended the
// same way: the model reads it once.
type outputGroup struct {
	hosts []string
	hosts.ExecResult
}

// sameOutput groups results by what they printed and how they ended, in
// the order of each group's first host.
func sameOutput(results []hosts.ExecResult) []outputGroup {
	var groups []outputGroup
	at := map[string]int{}
	for _, r := range results {
		key := fmt.Sprintf("%q %q %q %v", r.Stdout, r.Stderr, hostStatus(r), r.Err != nil)
		if i, ok := at[key]; ok && r.Err == nil {
			groups[i].hosts = append(groups[i].hosts, r.Host)
			continue
		}
		at[key] = len(groups)
		groups = append(groups, outputGroup{hosts: []string{r.Host}, ExecResult: r})
	}
	return groups
}

// writeOutput writes one group's output, framed, cut to share bytes.
func writeOutput(b *strings.Builder, command string, g outputGroup, share int) {
	names := strings.Join(g.hosts, ", ")
	fmt.Fprintf(b, "<output host=%q command=%q>\n", names, command)
	if ranNot(g.ExecResult) {
		fmt.Fprintf(b, "(could not run: %v)\n", g.Err)
	} else {
		out := g.Stdout
		if g.Stderr != "" {
			out += "\n[stderr]\n" + g.Stderr
		}
		out = retell(textcut.Keep(out, share, capturedGap))
		b.WriteString(unframe(out))
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("</output>\n")
	if len(g.hosts) > 1 {
		fmt.Fprintf(b, "[%s: same output, %s]\n", names, hostStatus(g.ExecResult))
		return
	}
	fmt.Fprintf(b, "[%s: %s]\n", names, hostStatus(g.ExecResult))
}

// capturedMarker is the line hosts/executor (tailBuffer) and hosts
// (capture) leave where they dropped the middle of a command's output,
// with the true count: the cut marker adds it to what it cuts itself, so
// that it says what the command really printed.
var capturedMarker = regexp.MustCompile(`^(?:…\[(\d+) bytes of output cut here\]…|\[\.\.\. opsbot: (\d+) bytes of output omitted \.\.\.\])$`)

// retell words the capture markers that are left (the output fit) like
// the cut's own: "[… 1.22 MB cut here …]".
func retell(s string) string {
	if !strings.Contains(s, "bytes of output") {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if n, ok := capturedGap(strings.TrimSuffix(l, "\n")); ok {
			lines[i] = "[… " + textcut.Bytes(n) + " cut here …]" + l[len(strings.TrimSuffix(l, "\n")):]
		}
	}
	return strings.Join(lines, "")
}

// capturedGap is a textcut.Gap for capturedMarker.
func capturedGap(line string) (int64, bool) {
	m := capturedMarker.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1]+m[2], 10, 64)
	return n, err == nil
}

// hostStatus is one host's outcome in a few words.
func hostStatus(r hosts.ExecResult) string {
	switch {
	case ranNot(r):
		return "error: " + r.Err.Error()
	case r.Err != nil:
		// Cut off by a Stop: it ran, for a while.
		return fmt.Sprintf("stopped after %s, so it may have partly run", r.Duration.Round(time.Millisecond))
	}
	return r.Status()
}

// ranNot reports whether a command could not run at all: an error, and
// not a run that a Stop or its deadline killed.
func ranNot(r hosts.ExecResult) bool {
	return r.Err != nil && !r.Killed
}

// unframe keeps output from closing its own frame: a command that prints
// "</output>" must not make what follows look like opsbot's words.
func unframe(s string) string {
	return strings.ReplaceAll(s, "</output", "<\\/output")
}

// runsOf describes what a command's results were, for people.
func runsOf(command string, results []hosts.ExecResult) []agent.CommandRun {
	runs := make([]agent.CommandRun, len(results))
	for i, r := range results {
		runs[i] = agent.CommandRun{Host: r.Host, Command: command, ExitCode: r.ExitCode, Signal: r.Signal, Duration: r.Duration,
			Killed: r.Killed, Output: tailOf(strings.TrimRight(r.Stdout+r.Stderr, "\n"), 2000)}
		if r.Err != nil {
			runs[i].Err = r.Err.Error()
		}
	}
	return runs
}

// tailOf is the last n bytes of s, marked as cut when it is.
func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
