package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// ranList collects the commands an agent turn ran, to show after its
// answer what ran where and how it ended.
type ranList struct {
	mu   sync.Mutex
	runs []agent.CommandRun
}

func (l *ranList) add(runs ...agent.CommandRun) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, runs...)
}

func (l *ranList) all() []agent.CommandRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]agent.CommandRun(nil), l.runs...)
}

// Output excerpts stay short: the thread shows that a command ran and how
// it ended; the whole output is the model's to read.
const (
	excerptLines = 5
	excerptBytes = 600
)

// show posts, after an agent turn, what it ran: each command, its host,
// how it ended and the end of its output. Nothing when it ran nothing, or
// where the platform keeps every status line in view.
func (l *ranList) show(ctx context.Context, out poster, ev connectors.Event) {
	runs := l.all()
	if c, ok := out.conn(ev.Platform); len(runs) == 0 || (ok && c.Limits().KeepsStatus) {
		return
	}
	out.reply(ctx, ev, ranText(runs, maxText(out, ev)))
}

// ranText renders runs within limit characters, the latest kept when not
// all fit.
func ranText(runs []agent.CommandRun, limit int) string {
	var parts []string
	size := render.Chars("**What ran**\n") + 80
	for i := len(runs) - 1; i >= 0; i-- {
		p := runText(runs[i])
		if size+render.Chars(p)+1 > limit && len(parts) > 0 {
			parts = append(parts, fmt.Sprintf("_(%d earlier commands not shown)_", i+1))
			break
		}
		size += render.Chars(p) + 1
		parts = append(parts, p)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return "**What ran**\n" + strings.Join(parts, "\n")
}

// runText is one command: "✓ `uptime` on local — exit 0 in 3ms", then the
// end of its output in a code block.
func runText(r agent.CommandRun) string {
	mark, how := "✓", fmt.Sprintf("exit %d in %s", r.ExitCode, r.Duration.Round(time.Millisecond))
	switch {
	case strings.Contains(r.Err, "context canceled") || (r.Killed && r.Err != ""):
		mark, how = "⏹", fmt.Sprintf("stopped after %s", r.Duration.Round(time.Millisecond))
	case r.Err != "":
		mark, how = "✗", "could not run: "+hosts.ReasonText(r.Err)
	case r.Signal != "":
		mark, how = "✗", fmt.Sprintf("killed by %s after %s", r.Signal, r.Duration.Round(time.Millisecond))
	case r.Killed:
		mark, how = "✗", fmt.Sprintf("stopped after %s (its time limit, or Stop)", r.Duration.Round(time.Millisecond))
	case r.ExitCode != 0:
		mark = "✗"
	}
	s := fmt.Sprintf("%s `%s` on %s — %s", mark, oneLine(r.Command), r.Host, how)
	if ex := excerpt(r.Output); ex != "" {
		fence := strings.Repeat("`", max(3, longestRun(ex, '`')+1))
		// "output" lets a connector fold the excerpt (the web chat does).
		s += "\n" + fence + "output\n" + ex + "\n" + fence
	}
	return s
}

// excerpt is the last few lines of output, within excerptBytes, with a
// mark when more came before.
func excerpt(out string) string {
	out = strings.ToValidUTF8(strings.TrimRight(out, "\n"), "")
	if out == "" {
		return ""
	}
	lines := strings.Split(out, "\n")
	cut := len(lines) > excerptLines
	if cut {
		lines = lines[len(lines)-excerptLines:]
	}
	s := strings.Join(lines, "\n")
	if len(s) > excerptBytes {
		s, cut = s[len(s)-excerptBytes:], true
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
	}
	if cut {
		s = "…\n" + s
	}
	return s
}

// oneLine shows a multi-line command on one line, its breaks marked.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " ⏎ "), "`", "'")
}
