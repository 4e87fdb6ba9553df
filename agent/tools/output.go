package tools

import (
	"fmt"
	"strings"

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
// outputs are cut to their head and tail.
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
	share := max(maxToolResult/max(len(results), 1), minHostShare)
	for _, r := range results {
		writeOutput(&b, command, r, share)
	}
	res := agent.ToolResult{Content: b.String(), IsError: failed > 0}
	if len(results) == 1 {
		res.Summary = hostStatus(results[0])
	} else {
		res.Summary = fmt.Sprintf("%d hosts, %d failed", len(results), failed)
	}
	return res
}

// writeOutput writes one host's output, framed, cut to share bytes.
func writeOutput(b *strings.Builder, command string, r hosts.ExecResult, share int) {
	fmt.Fprintf(b, "<output host=%q command=%q>\n", r.Host, command)
	if r.Err != nil {
		fmt.Fprintf(b, "(could not run: %v)\n", r.Err)
	} else {
		out := r.Stdout
		if r.Stderr != "" {
			out += "\n[stderr]\n" + r.Stderr
		}
		out = headTail(out, share)
		b.WriteString(unframe(out))
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(b, "</output>\n[%s: %s]\n", r.Host, hostStatus(r))
}

// hostStatus is one host's outcome in a few words.
func hostStatus(r hosts.ExecResult) string {
	if r.Err != nil {
		return "error: " + r.Err.Error()
	}
	return r.Status()
}

// headTail keeps the first and last halves of n bytes of s, marking the
// cut: the column headers and the first error, and how it ended.
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := textcut.Head(s, n/2), textcut.Tail(s, n/2)
	return fmt.Sprintf("%s\n[… %d bytes cut here …]\n%s", head, len(s)-len(head)-len(tail), tail)
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
