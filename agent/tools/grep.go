package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

//go:embed grep.md
var grepDescription string

// Grep is `grep`: the lines of a file, or the files under a folder, that
// match a pattern, with context, run as `grep` through the guard like
// run_command.
type Grep struct{ Guard *approvals.Guard }

var (
	_ agent.Tool       = (*Grep)(nil)
	_ agent.Concurrent = (*Grep)(nil)
)

// The context lines grep gives at most, and the matches per file.
const (
	maxGrepContext = 10
	grepMatches    = 200
)

type grepInput struct {
	Host    string `json:"host"`
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Context int    `json:"context"`
}

// Spec describes the tool.
func (*Grep) Spec() agent.ToolSpec {
	return spec("grep", grepDescription,
		`{"type":"object","properties":{"host":{"type":"string","description":"host, group:NAME, or comma list"},"pattern":{"type":"string","description":"extended regular expression (grep -E)"},"path":{"type":"string","description":"absolute path of a file or a folder"},"context":{"type":"integer","description":"lines of context around each match, default 0, at most 10"}},"required":["host","pattern","path"]}`)
}

// Describe is the status line.
func (*Grep) Describe(call agent.ToolCall) string {
	var in grepInput
	_ = decodeInput(call, &in)
	return fmt.Sprintf("searching %s on %s for %q…", in.Path, in.Host, in.Pattern)
}

// Concurrent reports whether the call asks no person.
func (t *Grep) Concurrent(call agent.ToolCall) bool { return t.read().concurrent(call) }

// Call builds the command and runs it like run_command.
func (t *Grep) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	return t.read().run(ctx, call)
}

func (t *Grep) read() hostRead { return hostRead{guard: t.Guard, build: grepCommand} }

// grepCommand is the command grep runs. The pattern goes after -e and the
// path after --, so that neither is read as an option whatever it starts
// with.
func grepCommand(call agent.ToolCall) (target, command string, err error) {
	var in grepInput
	if err := decodeInput(call, &in); err != nil {
		return "", "", err
	}
	if strings.TrimSpace(in.Host) == "" || in.Pattern == "" || strings.TrimSpace(in.Path) == "" {
		return "", "", errors.New("grep needs a host, a pattern and a path")
	}
	pattern, err := quote(in.Pattern)
	if err != nil {
		return "", "", err
	}
	path, err := quote(in.Path)
	if err != nil {
		return "", "", err
	}
	opts := fmt.Sprintf("-rnIsE -m %d", grepMatches)
	if n := min(max(in.Context, 0), maxGrepContext); n > 0 {
		opts += fmt.Sprintf(" -C %d", n)
	}
	return in.Host, fmt.Sprintf("grep %s -e %s -- %s", opts, pattern, path), nil
}
